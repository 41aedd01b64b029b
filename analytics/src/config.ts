import { kafkaEnvShape, kafkaSecurityOf } from "@shop/kafka";
import { readEnvironment } from "@shop/service";
import { z } from "zod";

/** Settings of the analytics CLI, read once from the environment. */
export const envSchema = z.object({
  ...kafkaEnvShape,
  /** The consumer group; a second group such as auditoria reads everything with its own offsets. */
  GRUPO: z.string().trim().min(1).default("analytics"),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return {
    kafkaBrokers: e.KAFKA_BROKERS.split(","),
    kafkaPrefix: e.KAFKA_PREFIXO,
    kafkaSecurity: kafkaSecurityOf(e),
    grupo: `${e.KAFKA_PREFIXO}${e.GRUPO}`,
  };
}
