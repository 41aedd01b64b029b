import { join } from "node:path";
import { amqpUrl } from "@shop/amqp";
import { kafkaNames } from "@shop/contracts";
import { SESSION_MS } from "@shop/kafka";
import { readConfig as readBrokerOrdersConfig } from "../../../broker/orders/src/config.ts";
import { readConfig as readBrokerPaymentsConfig } from "../../../broker/payments/src/config.ts";
import { type InfraConfig, ROOT } from "../../../infra/config.ts";
import { userCluster } from "../../../infra/rabbitmq/node.ts";
import type { Companion, ShopProcesses } from "../../../infra/services.ts";
import { readConfig as readOrdersApiConfig } from "../../../orders-api/src/config.ts";
import { readConfig as readPaymentsConfig } from "../../../payments/src/config.ts";
import { brokerActions } from "./broker-actions.ts";
import { type RunningControl, startControlServer } from "./control-server.ts";
import { eventLogActions } from "./event-log-actions.ts";
import { ordersDb } from "./readings.ts";
import { experimentAction, replayAction } from "./runs.ts";
import { LabSession } from "./session.ts";

/**
 * The page's lab under `npm start` / `npm run start:broker`, and nowhere else: the only
 * caller is infra/cli.ts's start command, which owns the processes it acts on. The page
 * gets the control API's address through VITE_LAB_URL and its token through the address
 * printed at start (http://localhost:5173/#lab=…), which no other process can read.
 */
export const PAGE_ORIGINS = ["http://localhost:5173", "http://127.0.0.1:5173"];

/**
 * The services' settings as they read them from npm start's environment, by their own
 * readers: the lab finds the orders API, its database and the decision time where the
 * services do, with the same defaults.
 */
const ordersApiSettings = () => readOrdersApiConfig(process.env);
const paymentsSettings = () => readPaymentsConfig(process.env);
const brokerOrdersSettings = () => readBrokerOrdersConfig(process.env);

export interface PageLabOptions {
  edition: "eventos" | "broker";
  config: InfraConfig;
  log: (line: string) => void;
  /** Where the page is served (a test serves a build of its own elsewhere). */
  pageOrigins?: string[];
  /**
   * Where the shop's services are when they are not where npm start runs them: a test's
   * own shop (its Kafka broker's infra instance, topic prefix, ports and databases).
   */
  shop?: {
    kafkaInstance?: string;
    prefix?: string;
    ordersUrl?: string;
    ordersDb?: string;
    paymentsDb?: string;
    /** Added to the environment of every service the lab starts. */
    env?: Record<string, string>;
    /** The port of a payments instance the lab starts (0: any free one). */
    paymentsPort?: (instancia: string) => number;
    decisionMs?: number;
    confirmMs?: number;
  };
}

/** The lab as npm start holds it: what the banner and the page get, and the session itself. */
export interface PageLab extends Companion {
  session: LabSession;
  control: RunningControl;
}

export function pageLab(o: PageLabOptions) {
  return async (processes: ShopProcesses): Promise<PageLab> => {
    const session = new LabSession(
      o.edition,
      o.edition === "eventos" ? eventLogLab(processes, o) : brokerLab(processes, o),
      () =>
        processes.all().map((p) => ({
          nome: p.name,
          estado: processes.running(p.name) ? (p.paused ? "pausado" : "rodando") : "parado",
        })),
      o.log,
    );
    const control = await startControlServer(session, {
      pageOrigins: o.pageOrigins ?? PAGE_ORIGINS,
    });
    return {
      env: { VITE_LAB_URL: control.url },
      // The page's address with the token: the only way it reaches the page.
      urls: { web: `${(o.pageOrigins ?? PAGE_ORIGINS)[0]}/#lab=${control.token}` },
      banner: {
        "lab control": `${control.url} (127.0.0.1 only; open the web address above, with its #lab= token, to act from the page)`,
      },
      // No new action from here; one running ends with the processes it waits on (npm
      // start stops them next), and npm start exits without waiting for its story.
      close: () => control.close(),
      session,
      control,
    };
  };
}

function eventLogLab(processes: ShopProcesses, o: PageLabOptions) {
  const t = o.shop ?? {};
  const orders = ordersApiSettings();
  const prefix = t.prefix ?? orders.kafkaPrefix;
  const brokers = o.config.kafka.brokers.join(",");
  const db = orders.databaseUrl ?? t.ordersDb ?? join(ROOT, "orders-api", orders.dbPath);
  return [
    ...eventLogActions({
      processes,
      paymentsService: (instancia) => ({
        name: instancia,
        dir: "payments",
        env: {
          ...t.env,
          INSTANCIA: instancia,
          // caixa-2 on 5002, caixa-3 on 5003, as docs/event-log.md starts them by hand.
          PORTA: String(t.paymentsPort?.(instancia) ?? 5000 + Number(instancia.split("-")[1])),
        },
      }),
      ordersUrl: t.ordersUrl ?? `http://127.0.0.1:${orders.port}`,
      db: ordersDb(db),
      brokers,
      names: kafkaNames(prefix),
      kafka: {
        instance: t.kafkaInstance ?? "default",
        settings: o.config.kafka,
        // npm start's cluster is infra's default one ("cluster").
        cluster: o.config.kafka.cluster
          ? { name: "cluster", settings: o.config.kafka.cluster }
          : null,
      },
      // The consumers' session (libs/kafka/src/consumer/timings.ts).
      sessionMs: SESSION_MS,
      decisionMs: t.decisionMs ?? paymentsSettings().decisionWaitMs,
      confirmMs: t.confirmMs ?? orders.confirmMs,
    }),
    replayAction(processes, { brokers, prefix }),
    experimentAction(processes),
  ];
}

function brokerLab(processes: ShopProcesses, o: PageLabOptions) {
  const t = o.shop ?? {};
  const r = o.config.rabbit;
  const nodes = r.clusterSize > 1 ? userCluster(r.clusterSize) : [];
  const port = nodes[0]?.ports.amqp ?? r.port;
  return [
    ...brokerActions({
      processes,
      payments: { name: "payments", dir: "broker/payments", env: t.env },
      ordersUrl: t.ordersUrl ?? `http://127.0.0.1:${brokerOrdersSettings().port}`,
      ordersDb: t.ordersDb ?? join(ROOT, "broker/orders", brokerOrdersSettings().dbPath),
      paymentsDb:
        t.paymentsDb ?? join(ROOT, "broker/payments", readBrokerPaymentsConfig(process.env).dbPath),
      amqpAdminUrl: amqpUrl({ host: "127.0.0.1", port, ...r.admin, vhost: r.vhost }),
      nodes,
      machineRabbit: `${r.host}:${r.port}`,
    }),
    experimentAction(processes),
  ];
}
