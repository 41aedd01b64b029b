import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { loadDotEnv } from "@shop/service";
import { checkoutId, ensureEnvFile, type InfraConfig, readInfraConfig } from "../infra/config.ts";
import { panelUrl } from "../infra/rabbitmq/rabbitmq.ts";
import { scratchDir } from "../infra/scratch.ts";

/**
 * Where the shop's programs are started by the lab, the benchmarks and the tests: the
 * brokers' addresses read as the services read them, and the names, prefixes, databases
 * and environments that keep one run (and one checkout) apart from every other.
 */

/** The brokers' addresses and credentials, read the same way the services read them. */
export function shopConfig(): InfraConfig {
  ensureEnvFile();
  loadDotEnv();
  return readInfraConfig();
}

/**
 * A name no other run uses: topics, groups and vhosts are isolated by name, never faked.
 * Its stamp is the time in base 36, then this checkout's id (6 hex digits) and 2 random
 * ones, so that a run deletes what it made and never what a second checkout is using.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${checkoutId()}${randomBytes(1).toString("hex")}`;
}

/** uniqueName's stamp: the time in base 36 and 8 hex digits, ending the name or a part of it. */
const STAMP = /-([0-9a-z]{8,10})-([0-9a-f]{8})(?:\.|$)/;

/**
 * Whether a topic's name holds a uniqueName made by this checkout between `since` (ms since
 * the epoch) and now: a topic of one of this run's tests. The shop's own names
 * (pedidos.criados, ...) never match, nor a name whose letters only look like a stamp (it
 * reads as a time to come), nor another checkout's name.
 */
export function madeSince(topic: string, since: number): boolean {
  const stamp = STAMP.exec(topic);
  if (!stamp?.[1] || !stamp[2]?.startsWith(checkoutId())) return false;
  const made = Number.parseInt(stamp[1], 36);
  return made >= since && made <= Date.now();
}

/** A prefix of topics and groups (KAFKA_PREFIXO) that no other run uses. */
export const uniquePrefix = (name: string) => `${uniqueName(name)}.`;

/** A fresh database path in a temporary folder. */
export function tempDb(name = "shop"): string {
  return join(mkdtempSync(join(scratchDir(), `${name}-`)), `${name}.db`);
}

/** Environment for an event-log service: its own topic/group prefix, port 0, loopback. */
export function serviceEnv(prefix: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PORTA: "0",
    HOST: "127.0.0.1",
    KAFKA_BROKERS: shopConfig().kafka.brokers.join(","),
    KAFKA_PREFIXO: prefix,
    ...extra,
  };
}

/** Environment for a broker-edition service in its own vhost, with a database of its own. */
export function brokerEnv(
  vhost: { vhost: string },
  name: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const r = shopConfig().rabbit;
  return {
    PORTA: "0",
    HOST: "127.0.0.1",
    DB_PATH: tempDb(name),
    BROKER_HOST: r.host,
    BROKER_PORT: String(r.port),
    BROKER_USER: r.user,
    BROKER_PASSWORD: r.password,
    BROKER_VHOST: vhost.vhost,
    BROKER_PANEL_URL: panelUrl(r),
    BROKER_MONITOR_USER: r.monitor.user,
    BROKER_MONITOR_PASSWORD: r.monitor.password,
    ...extra,
  };
}
