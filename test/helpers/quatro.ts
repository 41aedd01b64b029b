import { ServiceProcess } from "../../harness/process.ts";
import { createVhost, type ShopVhost } from "../../harness/vhost.ts";
import { brokerEnv } from "./broker.ts";
import { serviceEnv, tempDb, uniquePrefix } from "./shop.ts";

/** A service of the four: where it answers. */
export interface Answering {
  url: string;
}

/**
 * The four HTTP services, each its own process with its own database, for hostile-input
 * tests. Processes, not in this test's own process: the hostile bodies' files send their
 * batches one after another and wait for every answer, and in process the services shared
 * this process's one share of the CPU with the client and with fast-check; beside the other
 * integration files on two cores, a batch of 4xx answers took up to 6.5 s and the file
 * 312-450 s where it took 24 s alone (2026-12-01).
 */
export interface FourServices {
  api: Answering;
  apiDb: string;
  /** A payments instance in the synchronous configuration: its POST /pagamentos takes bodies. */
  syncPayments: Answering;
  vhost: ShopVhost;
  brokerOrders: Answering;
  brokerOrdersDb: string;
  /** Null when asked for without it (nothing then decides a payment request). */
  brokerPayments: Answering | null;
  stop(): Promise<void>;
}

const answering = (p: ServiceProcess): Answering => ({ url: p.url() });

/**
 * Starts the orders API, a synchronous payments instance and both broker services, under a
 * name; without the broker payments service when `pagamentosBroker` is false.
 */
export async function startAllFour(
  nome: string,
  { pagamentosBroker = true } = {},
): Promise<FourServices> {
  const prefix = uniquePrefix(nome);
  const apiDb = tempDb(nome);
  const vhost = await createVhost(nome);
  const ordersEnv = brokerEnv(vhost, "broker-orders");
  const [api, syncPayments, brokerOrders, brokerPayments] = await Promise.all([
    ServiceProcess.start("orders-api", "orders-api", serviceEnv(prefix, { DB_PATH: apiDb })),
    ServiceProcess.start(
      "payments",
      "payments",
      serviceEnv(prefix, { MODO: "sincrono", TEMPO_DECISAO_MS: "0", KAFKA_BROKERS: "127.0.0.1:1" }),
    ),
    ServiceProcess.start("broker-orders", "broker/orders", ordersEnv),
    pagamentosBroker
      ? ServiceProcess.start(
          "broker-payments",
          "broker/payments",
          brokerEnv(vhost, "broker-payments"),
        )
      : null,
  ]);
  return {
    api: answering(api),
    apiDb,
    syncPayments: answering(syncPayments),
    vhost,
    brokerOrders: answering(brokerOrders),
    brokerOrdersDb: ordersEnv.DB_PATH as string,
    brokerPayments: brokerPayments ? answering(brokerPayments) : null,
    async stop() {
      await Promise.all([
        brokerPayments?.stop(),
        brokerOrders.stop(),
        syncPayments.stop(),
        api.stop(),
      ]);
      await vhost.dispose();
    },
  };
}
