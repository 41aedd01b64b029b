import { brokerServiceEnv, readBrokerServiceConfig } from "@shop/amqp";

/** Every setting of the broker edition's orders service, read once from the environment. */
export const envSchema = brokerServiceEnv({ port: 8080, dbPath: ".data/orders.db" });

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  return readBrokerServiceConfig(envSchema, env);
}
