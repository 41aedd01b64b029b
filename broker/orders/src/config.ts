import { brokerEnvShape, serviceConfig } from "@shop/amqp";
import { httpEnvShape, readEnvironment } from "@shop/service";
import { z } from "zod";

/** Every setting of the broker edition's orders service, read once from the environment. */
export const envSchema = z.object({
  ...httpEnvShape(8080),
  DB_PATH: z.string().default(".data/orders.db"),
  ...brokerEnvShape,
});

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return serviceConfig(e);
}
