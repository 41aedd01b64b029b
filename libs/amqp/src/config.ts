import { httpEnvShape, readEnvironment } from "@shop/service";
import { z } from "zod";

const PLACEHOLDER = /^<.*>$/;

/** A secret setting: no default, not empty, and not .env.example's <placeholder> left as is. */
export const secret = (name: string) =>
  z
    .string({ error: `${name} is not set: run \`npm run setup\` (it writes .env) or export it` })
    .min(1, { error: `${name} is empty` })
    .refine((v) => !PLACEHOLDER.test(v), { error: `${name} still holds its placeholder` });

/** Where RabbitMQ is: what every program that talks to it reads (services, infra, the dlq CLI). */
export const brokerAddressShape = {
  BROKER_HOST: z.string().default("127.0.0.1"),
  BROKER_PORT: z.coerce.number().int().min(1).max(65535).default(5672),
  BROKER_VHOST: z.string().default("/"),
  /**
   * A cluster's nodes, host:port[,host:port...]: the services connect to one and, when it
   * goes away, to the next. Without it, BROKER_HOST:BROKER_PORT alone.
   */
  BROKER_NODES: z
    .string()
    .regex(/^[^:,\s]+:\d+(,[^:,\s]+:\d+)*$/, { error: "must be host:port[,host:port...]" })
    .optional(),
  /** true: amqps:// (TLS), as a managed broker needs. */
  BROKER_TLS: z.enum(["true", "false"], { error: "must be true or false" }).default("false"),
  /** The CA that signed the broker's certificate (PEM); without it, the system's CAs. */
  BROKER_CA_FILE: z.string().min(1).optional(),
};

/** The broker settings both services of the broker edition read. Secrets have no default. */
export const brokerEnvShape = {
  ...brokerAddressShape,
  BROKER_USER: secret("BROKER_USER"),
  BROKER_PASSWORD: secret("BROKER_PASSWORD"),
  /** How long a publish waits for the broker's confirm. */
  CONFIRMACAO_MS: z.coerce.number().int().positive().default(5000),
  /** Consumers per queue, each with prefetch 1 (see docs/decisions.md). */
  CONSUMIDORES: z.coerce.number().int().min(1).max(64).default(16),
  /**
   * Fault injection for demos and tests: wait this long after a message was handled (its
   * effect committed, its result published), before the ack, so that the process can be
   * killed in that window.
   */
  PAUSA_ANTES_DO_ACK_MS: z.coerce.number().int().min(0).default(0),
};

export function brokerAddress(e: {
  BROKER_HOST: string;
  BROKER_PORT: number;
  BROKER_VHOST: string;
  BROKER_USER: string;
  BROKER_PASSWORD: string;
  BROKER_NODES?: string | undefined;
  BROKER_TLS?: "true" | "false" | undefined;
  BROKER_CA_FILE?: string | undefined;
}) {
  if (e.BROKER_CA_FILE && e.BROKER_TLS !== "true")
    throw new Error("Invalid configuration:\n  BROKER_CA_FILE: set BROKER_TLS=true to use it");
  const nodes = e.BROKER_NODES?.split(",").map((n) => {
    const [host, port] = n.split(":") as [string, string];
    return { host, port: Number(port) };
  });
  return {
    host: e.BROKER_HOST,
    port: e.BROKER_PORT,
    vhost: e.BROKER_VHOST,
    user: e.BROKER_USER,
    password: e.BROKER_PASSWORD,
    ...(nodes ? { nodes } : {}),
    ...(e.BROKER_TLS === "true" ? { tls: { caFile: e.BROKER_CA_FILE ?? null } } : {}),
  };
}

/** Every setting of a broker-edition service: HTTP, its SQLite file and the broker. */
export function brokerServiceEnv(defaults: { port: number; dbPath: string }) {
  return z.object({
    ...httpEnvShape(defaults.port),
    DB_PATH: z.string().default(defaults.dbPath),
    ...brokerEnvShape,
  });
}

/** A broker-edition service's settings, read once from the environment with its schema. */
export function readBrokerServiceConfig(
  schema: ReturnType<typeof brokerServiceEnv>,
  env: NodeJS.ProcessEnv,
) {
  const e = readEnvironment(schema, env);
  return {
    port: e.PORTA,
    host: e.HOST,
    dbPath: e.DB_PATH,
    broker: brokerAddress(e),
    confirmMs: e.CONFIRMACAO_MS,
    consumers: e.CONSUMIDORES,
    pauseBeforeAckMs: e.PAUSA_ANTES_DO_ACK_MS,
  };
}

export type BrokerServiceConfig = ReturnType<typeof readBrokerServiceConfig>;
