import { readConfig as brokerOrdersConfig } from "../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../broker/orders/src/server.ts";
import { readConfig as brokerPaymentsConfig } from "../../broker/payments/src/config.ts";
import {
  type PaymentsService as BrokerPayments,
  startPayments as startBrokerPayments,
} from "../../broker/payments/src/server.ts";
import { createVhost, type ShopVhost } from "../../harness/vhost.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../payments/src/server.ts";
import { brokerEnv } from "./broker.ts";
import { capturingLogger, serviceEnv, tempDb, uniquePrefix } from "./shop.ts";

/** The four HTTP services, in process, each with its own database, for hostile-input tests. */
export interface FourServices {
  api: OrdersApi;
  apiDb: string;
  /** A payments instance in the synchronous configuration: its POST /pagamentos takes bodies. */
  syncPayments: PaymentsInstance;
  vhost: ShopVhost;
  brokerOrders: OrdersService;
  brokerOrdersDb: string;
  /** Null when asked for without it (nothing then decides a payment request). */
  brokerPayments: BrokerPayments | null;
  stop(): Promise<void>;
}

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
  const api = await startOrdersApi(
    ordersConfig(serviceEnv(prefix, { DB_PATH: apiDb })),
    capturingLogger("orders-api"),
  );
  const syncPayments = await startPayments(
    paymentsConfig(
      serviceEnv(prefix, { MODO: "sincrono", TEMPO_DECISAO_MS: "0", KAFKA_BROKERS: "127.0.0.1:1" }),
    ),
    capturingLogger("payments"),
    () => {},
  );
  const vhost = await createVhost(nome);
  const ordersEnv = brokerEnv(vhost, "broker-orders");
  const brokerOrders = await startOrders(
    brokerOrdersConfig(ordersEnv),
    capturingLogger("broker-orders"),
  );
  const brokerPayments = pagamentosBroker
    ? await startBrokerPayments(
        brokerPaymentsConfig(brokerEnv(vhost, "broker-payments")),
        capturingLogger("broker-payments"),
      )
    : null;
  return {
    api,
    apiDb,
    syncPayments,
    vhost,
    brokerOrders,
    brokerOrdersDb: ordersEnv.DB_PATH as string,
    brokerPayments,
    async stop() {
      await brokerPayments?.stop();
      await brokerOrders.stop();
      await vhost.dispose();
      await syncPayments.stop();
      await api.stop();
    },
  };
}
