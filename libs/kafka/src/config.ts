import { z } from "zod";

/** The Kafka settings every event-log program reads. */
export const kafkaEnvShape = {
  /** Bootstrap addresses, host:port[,host:port...]. */
  KAFKA_BROKERS: z
    .string()
    .regex(/^[^:,\s]+:\d+(,[^:,\s]+:\d+)*$/, { error: "must be host:port[,host:port...]" })
    .default("127.0.0.1:9092"),
  /** Prefix for topic and group names; empty in production, unique per test run. */
  KAFKA_PREFIXO: z.string().default(""),
};

/** The settings an event-log service with an HTTP side shares, from its parsed environment. */
export function kafkaServiceSettings(e: {
  PORTA: number;
  HOST: string;
  KAFKA_BROKERS: string;
  KAFKA_PREFIXO: string;
}) {
  return {
    port: e.PORTA,
    host: e.HOST,
    kafkaBrokers: e.KAFKA_BROKERS.split(","),
    kafkaPrefix: e.KAFKA_PREFIXO,
  };
}
