import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brokerAddressShape, secret } from "@shop/amqp";
import { kafkaEnvShape } from "@shop/kafka";
import { DOTENV_PATH, readEnvironment } from "@shop/service";
import { z } from "zod";
import { checkoutId, ROOT } from "./scratch.ts";

/** The repository root, and this checkout's id. */
export { checkoutId, ROOT };

/** The .env that every program loads (loadDotEnv in libs/service). */
const ENV_FILE = DOTENV_PATH;
const ENV_EXAMPLE = join(ROOT, ".env.example");

/**
 * The RabbitMQ users of a checkout, named after its id, so that each checkout has users of
 * its own and one's `npm run setup` never resets the passwords the other's .env holds.
 */
export function checkoutUsers(root = ROOT) {
  const id = checkoutId(root);
  return { user: `shop-${id}`, admin: `shop-admin-${id}`, monitor: `shop-monitor-${id}` };
}

/** What `npm run setup` puts in place of each placeholder of .env.example. */
const GENERATED: Record<string, () => string> = {
  "<broker-user>": () => checkoutUsers().user,
  "<broker-password>": () => randomBytes(18).toString("base64url"),
  "<broker-admin-user>": () => checkoutUsers().admin,
  "<broker-admin-password>": () => randomBytes(18).toString("base64url"),
  "<broker-monitor-user>": () => checkoutUsers().monitor,
  "<broker-monitor-password>": () => randomBytes(18).toString("base64url"),
  "<broker-erlang-cookie>": () => randomBytes(24).toString("hex"),
  "<grafana-password>": () => randomBytes(18).toString("base64url"),
  "<orders-db-user>": () => `shop_${checkoutId()}`,
  "<orders-db-password>": () => randomBytes(18).toString("base64url"),
  "<postgres-admin-password>": () => randomBytes(18).toString("base64url"),
};

/** Placeholders of a commented line (an example) stay as they are: only settings are filled. */
const fillIn = (envLine: string) =>
  envLine.startsWith("#") ? envLine : envLine.replace(/<[a-z-]+>/g, (p) => GENERATED[p]?.() ?? p);

/**
 * Creates .env from .env.example when it is absent, with local user names and random
 * passwords. An .env written before a setting was added gets that setting appended, so
 * that an existing checkout keeps working. Nothing secret is ever committed: .env is
 * git-ignored.
 */
export function ensureEnvFile(): { created: boolean; path: string } {
  const example = readFileSync(ENV_EXAMPLE, "utf8");
  if (!existsSync(ENV_FILE)) {
    writeFileSync(ENV_FILE, example.split("\n").map(fillIn).join("\n"), { mode: 0o600 });
    return { created: true, path: ENV_FILE };
  }
  const current = readFileSync(ENV_FILE, "utf8");
  const present = new Set(current.split("\n").map((l) => l.split("=")[0]?.trim()));
  const missing = example
    .split("\n")
    .filter((l) => /^[A-Z_]+=<[a-z-]+>$/.test(l) && !present.has(l.split("=")[0]));
  if (missing.length > 0) {
    appendFileSync(
      ENV_FILE,
      `${current.endsWith("\n") ? "" : "\n"}# added by npm run setup\n${missing.map(fillIn).join("\n")}\n`,
    );
  }
  return { created: false, path: ENV_FILE };
}

/** The settings infra reads: the same shapes the services read, plus its own ports and admin. */
const InfraEnv = z.object({
  KAFKA_BROKERS: kafkaEnvShape.KAFKA_BROKERS,
  KAFKA_CONTROLLER_PORT: z.coerce.number().int().min(1).max(65535).default(9093),
  /** 1: one broker (the default); 3: a KRaft cluster of three on this machine. */
  KAFKA_NODES: z.enum(["1", "3"], { error: "must be 1 or 3" }).default("1"),
  ...brokerAddressShape,
  /** 1: the machine's RabbitMQ (the default); 3: a cluster of three nodes beside it. */
  BROKER_CLUSTER_SIZE: z.enum(["1", "3"], { error: "must be 1 or 3" }).default("1"),
  BROKER_PANEL_PORT: z.coerce.number().int().min(1).max(65535).default(15672),
  BROKER_USER: secret("BROKER_USER"),
  BROKER_PASSWORD: secret("BROKER_PASSWORD"),
  BROKER_ADMIN_USER: secret("BROKER_ADMIN_USER"),
  BROKER_ADMIN_PASSWORD: secret("BROKER_ADMIN_PASSWORD"),
  BROKER_MONITOR_USER: secret("BROKER_MONITOR_USER"),
  BROKER_MONITOR_PASSWORD: secret("BROKER_MONITOR_PASSWORD"),
});

export interface InfraConfig {
  kafka: {
    brokers: string[];
    host: string;
    port: number;
    controllerPort: number;
    /** With KAFKA_NODES=3: the cluster's nodes (then `brokers` lists them all). */
    cluster: { host: string; nodes: { port: number; controllerPort: number }[] } | null;
  };
  rabbit: {
    host: string;
    port: number;
    panelPort: number;
    vhost: string;
    /** The services' user: the shop's exchanges and queues of `vhost`, no tag. */
    user: string;
    password: string;
    /** The administrator: infra, tests and benchmarks (vhosts, panel, management API). */
    admin: { user: string; password: string };
    /** The broker panel's reader: tag monitoring, no right to any message. */
    monitor: { user: string; password: string };
    /** With BROKER_CLUSTER_SIZE=3: how many nodes infra runs beside the machine's RabbitMQ. */
    clusterSize: number;
  };
}

export function readInfraConfig(env: NodeJS.ProcessEnv = process.env): InfraConfig {
  const e = readEnvironment(InfraEnv, env);
  return {
    kafka: kafkaSettings(e.KAFKA_BROKERS, e.KAFKA_CONTROLLER_PORT, Number(e.KAFKA_NODES)),
    rabbit: {
      host: e.BROKER_HOST,
      port: e.BROKER_PORT,
      panelPort: e.BROKER_PANEL_PORT,
      vhost: e.BROKER_VHOST,
      user: e.BROKER_USER,
      password: e.BROKER_PASSWORD,
      admin: { user: e.BROKER_ADMIN_USER, password: e.BROKER_ADMIN_PASSWORD },
      monitor: { user: e.BROKER_MONITOR_USER, password: e.BROKER_MONITOR_PASSWORD },
      clusterSize: Number(e.BROKER_CLUSTER_SIZE),
    },
  };
}

/**
 * Where the broker or the cluster listens. A cluster of three takes its nodes from
 * KAFKA_BROKERS when that lists three, else from the first address: ports p, p+2, p+4
 * with their controllers on p+1, p+3, p+5 (9092..9097 by default).
 */
export function kafkaSettings(
  kafkaBrokers: string,
  controllerPort: number,
  nodes: number,
): InfraConfig["kafka"] {
  const listed = kafkaBrokers.split(",");
  const [host, first] = (listed[0] as string).split(":") as [string, string];
  const port = Number(first);
  if (nodes === 1) return { brokers: listed, host, port, controllerPort, cluster: null };
  const ports =
    listed.length === nodes
      ? listed.map((b) => Number(b.split(":")[1]))
      : Array.from({ length: nodes }, (_, i) => port + 2 * i);
  const cluster = { host, nodes: ports.map((p) => ({ port: p, controllerPort: p + 1 })) };
  return {
    brokers: ports.map((p) => `${host}:${p}`),
    host,
    port,
    controllerPort: port + 1,
    cluster,
  };
}

export type Log = (line: string) => void;
