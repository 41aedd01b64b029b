import { type KafkaNames, kafkaNames } from "@shop/contracts";
import type { Logger } from "@shop/service";
import { afterAll } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../broker/orders/src/server.ts";
import { readConfig as brokerPaymentsConfig } from "../../broker/payments/src/config.ts";
import {
  type PaymentsService,
  startPayments as startBrokerPayments,
} from "../../broker/payments/src/server.ts";
import { type FreshStore, freshOrdersStore } from "../../harness/orders-store.ts";
import { createVhost, type ShopVhost } from "../../harness/vhost.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../payments/src/server.ts";
import { brokerEnv, capturingLogger, ServiceProcess, serviceEnv, uniquePrefix } from "./shop.ts";

/** Anything a test starts and must stop: a service, a client, a database. */
interface Stoppable {
  stop(): Promise<unknown>;
}

export interface TestShop {
  /** This file's prefix of topics and groups (`<name>-<id>.`), and the names it makes. */
  prefix: string;
  names: KafkaNames;
  /** A service's environment for this file: its prefix, the machine's brokers, `over`. */
  env(over?: Record<string, string>): NodeJS.ProcessEnv;
  /** `thing`, stopped when the file ends. */
  own<T extends Stoppable>(thing: T): T;
  /** A service as a real process (`dir`: orders-api, payments, ...), stopped when the file ends. */
  start(label: string, dir: string, over?: Record<string, string>): Promise<ServiceProcess>;
  /**
   * The orders API in this process, on a fresh database of the store under test (SQLite,
   * or PostgreSQL in the postgres project), both dropped when the file ends.
   */
  ordersApi(
    over?: Record<string, string>,
    log?: Logger,
  ): Promise<{ api: OrdersApi; db: FreshStore }>;
  /** A payments instance in this process, stopped when the file ends. */
  payments(
    over?: Record<string, string>,
    log?: Logger,
    print?: (line: string) => void,
  ): Promise<PaymentsInstance>;
  /** The broker edition: a RabbitMQ vhost of this file's own, deleted when the file ends. */
  vhost(): Promise<ShopVhost>;
  /** The broker edition's orders service in this process, in `vhost`, stopped when the file ends. */
  brokerOrders(
    vhost: ShopVhost,
    over?: Record<string, string>,
    log?: Logger,
  ): Promise<OrdersService>;
  /** The broker edition's payments service in this process, in `vhost`, stopped when the file ends. */
  brokerPayments(vhost: ShopVhost, over?: Record<string, string>): Promise<PaymentsService>;
}

/**
 * The one per-file fixture of the integration tests: call it once at the top of a file.
 * What it starts is stopped when the file ends, the last started first (a service before
 * the database under it), whatever failed; each file has its own prefix, so files running
 * side by side never read each other's topics.
 */
export function testShop(name: string): TestShop {
  const prefix = uniquePrefix(name);
  const owned: Stoppable[] = [];
  afterAll(async () => {
    for (const thing of owned.splice(0).reverse()) await thing.stop();
  }, 120_000);
  const own = <T extends Stoppable>(thing: T): T => {
    owned.push(thing);
    return thing;
  };
  const env = (over: Record<string, string> = {}) => serviceEnv(prefix, over);
  return {
    prefix,
    names: kafkaNames(prefix),
    env,
    own,
    start: async (label, dir, over = {}) => own(await ServiceProcess.start(label, dir, env(over))),
    async ordersApi(over = {}, log = capturingLogger("orders-api")) {
      const db = await freshOrdersStore(name);
      own({ stop: db.drop });
      const api = own(await startOrdersApi(ordersConfig(env({ ...db.env, ...over })), log));
      return { api, db };
    },
    payments: async (over = {}, log = capturingLogger("payments"), print) =>
      own(await startPayments(paymentsConfig(env(over)), log, print)),
    vhost: async () => {
      const vhost = await createVhost(name);
      own({ stop: () => vhost.dispose() });
      return vhost;
    },
    brokerOrders: async (vhost, over = {}, log = capturingLogger("broker-orders")) =>
      own(await startOrders(brokerOrdersConfig(brokerEnv(vhost, "orders", over)), log)),
    brokerPayments: async (vhost, over = {}) =>
      own(
        await startBrokerPayments(
          brokerPaymentsConfig(brokerEnv(vhost, "payments", over)),
          capturingLogger("broker-payments"),
        ),
      ),
  };
}
