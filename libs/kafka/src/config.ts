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
  /** true: TLS to every broker (a managed cluster's SSL or SASL_SSL listener). */
  KAFKA_SSL: z.enum(["true", "false"], { error: "must be true or false" }).default("false"),
  /** The CA that signed the brokers' certificates (PEM); without it, the system's CAs. */
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  /** SASL authentication: plain, scram-sha-256 or scram-sha-512, with a user and password. */
  KAFKA_SASL_MECHANISM: z.enum(["plain", "scram-sha-256", "scram-sha-512"]).optional(),
  KAFKA_SASL_USER: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
};

/**
 * How a program reaches Kafka beyond the addresses: TLS (with the CA file named, for
 * messages that say which setting to fix) and SASL. Both off by default.
 */
export interface KafkaSecurity {
  ssl: { caFile: string | null } | null;
  sasl: {
    mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
    username: string;
    password: string;
  } | null;
}

export const NO_KAFKA_SECURITY: KafkaSecurity = { ssl: null, sasl: null };

/** The security settings from a parsed environment; a mechanism without its user or password is refused. */
export function kafkaSecurityOf(e: {
  KAFKA_SSL: "true" | "false";
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: "plain" | "scram-sha-256" | "scram-sha-512" | undefined;
  KAFKA_SASL_USER?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}): KafkaSecurity {
  if (e.KAFKA_SSL_CA_FILE && e.KAFKA_SSL !== "true")
    throw new Error("Invalid configuration:\n  KAFKA_SSL_CA_FILE: set KAFKA_SSL=true to use it");
  if (e.KAFKA_SASL_MECHANISM && (!e.KAFKA_SASL_USER || !e.KAFKA_SASL_PASSWORD))
    throw new Error(
      "Invalid configuration:\n  KAFKA_SASL_MECHANISM needs KAFKA_SASL_USER and KAFKA_SASL_PASSWORD set too",
    );
  return {
    ssl: e.KAFKA_SSL === "true" ? { caFile: e.KAFKA_SSL_CA_FILE ?? null } : null,
    sasl:
      e.KAFKA_SASL_MECHANISM && e.KAFKA_SASL_USER && e.KAFKA_SASL_PASSWORD
        ? {
            mechanism: e.KAFKA_SASL_MECHANISM,
            username: e.KAFKA_SASL_USER,
            password: e.KAFKA_SASL_PASSWORD,
          }
        : null,
  };
}

/** The settings an event-log service with an HTTP side shares, from its parsed environment. */
export function kafkaServiceSettings(
  e: {
    PORTA: number;
    HOST: string;
    KAFKA_BROKERS: string;
    KAFKA_PREFIXO: string;
  } & Parameters<typeof kafkaSecurityOf>[0],
) {
  return {
    port: e.PORTA,
    host: e.HOST,
    kafkaBrokers: e.KAFKA_BROKERS.split(","),
    kafkaPrefix: e.KAFKA_PREFIXO,
    kafkaSecurity: kafkaSecurityOf(e),
  };
}
