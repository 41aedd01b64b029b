import { brokerAddress, brokerAddressShape } from "@shop/amqp";
import { kafkaEnvShape, kafkaSecurityOf } from "@shop/kafka";
import { readEnvironment } from "@shop/service";
import { z } from "zod";

/** The dead-letter CLI reads both editions' settings; RabbitMQ's are optional (Kafka-only use). */
export const envSchema = z.object({
  ...kafkaEnvShape,
  ...brokerAddressShape,
  BROKER_USER: z.string().optional(),
  BROKER_PASSWORD: z.string().optional(),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  const rabbit =
    e.BROKER_USER && e.BROKER_PASSWORD
      ? brokerAddress({ ...e, BROKER_USER: e.BROKER_USER, BROKER_PASSWORD: e.BROKER_PASSWORD })
      : null;
  return {
    kafkaBrokers: e.KAFKA_BROKERS.split(","),
    kafkaPrefix: e.KAFKA_PREFIXO,
    kafkaSecurity: kafkaSecurityOf(e),
    rabbit,
  };
}
export type Config = ReturnType<typeof readConfig>;
