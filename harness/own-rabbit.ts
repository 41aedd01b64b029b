import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { amqpUrl } from "@shop/amqp";
import { freePort } from "../infra/ports.ts";
import {
  clusterAddresses,
  type RabbitNode,
  rabbitNode,
  startRabbitCluster,
  type TlsFiles,
} from "../infra/rabbitmq/node.ts";
import { scratchDir } from "../infra/scratch.ts";
import { shopConfig, uniqueName } from "./env.ts";
import { runLogDir } from "./logs.ts";

export { freePort };

const run = promisify(execFile);

/** A node of the test's own: ports chosen free now, a temporary folder. */
async function testNode(
  name: string,
  { panel = false, tls }: { panel?: boolean; tls?: TlsFiles } = {},
): Promise<RabbitNode> {
  const ports = {
    amqp: await freePort(),
    distribution: await freePort(),
    ...(panel ? { panel: await freePort() } : {}),
    ...(tls ? { tls: await freePort() } : {}),
  };
  return rabbitNode(uniqueName(name), mkdtempSync(join(scratchDir(), "own-rabbit-")), ports, tls);
}

/** With SHOP_TEST_LOG_DIR (the fault suite), a node's log outlives its folder. */
async function keepLogAndRemove(n: RabbitNode) {
  await n.stop();
  const logs = runLogDir();
  if (logs) {
    cpSync(join(n.dir, "log"), join(logs, `rabbit-${n.node.split("@")[0]}`), { recursive: true });
  }
  n.remove();
}

/**
 * A RabbitMQ node of the test's own (infra/rabbitmq/node.ts: its own node name, ports
 * chosen free at run time, data and log folders, no plugins). A test may stop, restart or
 * kill it without touching the machine-wide RabbitMQ. It has the shop's two users on `/`.
 */
export async function ownRabbit(name: string, { tls }: { tls?: TlsFiles } = {}) {
  const n = await testNode(name, tls ? { tls } : {});
  await n.start({ users: shopConfig().rabbit });
  const { rabbit } = shopConfig();
  return {
    node: n.node,
    port: n.ports.amqp,
    /** With `tls`, the amqps:// listener's port. */
    tlsPort: n.ports.tls,
    /** The services' settings for this node (its `/` vhost). */
    env(): Record<string, string> {
      return { BROKER_HOST: "127.0.0.1", BROKER_PORT: String(n.ports.amqp), BROKER_VHOST: "/" };
    },
    /** AMQP URL of the administrator, to `/` on this node. */
    urlAdmin: amqpUrl({ host: "127.0.0.1", port: n.ports.amqp, ...rabbit.admin, vhost: "/" }),
    atende: n.answers,
    stopApp: n.stopApp,
    startApp: n.startApp,
    kill: n.kill,
    /** Starts the node again after a kill, on the same ports and data folder. */
    restart: n.start,
    /**
     * Sets the node's free-disk limit: above the disk's free space it raises the disk
     * alarm, which blocks every publishing connection until it is set back below. Run
     * without blocking: a test measuring its clients' answers meanwhile must not stall.
     */
    async setDiskFreeLimit(limit: string) {
      await run("rabbitmqctl", ["-n", n.node, "set_disk_free_limit", limit], {
        env: n.env,
        timeout: 60_000,
      });
    },
    /**
     * The node's resource alarms now (`rabbitmq-diagnostics alarms`), as RabbitMQ names
     * them; run without blocking, for the same reason.
     */
    async alarms(): Promise<unknown[]> {
      const { stdout } = await run(
        "rabbitmq-diagnostics",
        ["-n", n.node, "-q", "alarms", "--formatter", "json"],
        { env: n.env, encoding: "utf8", timeout: 60_000 },
      );
      // {"alarms":[]} when there are none; {"local":[...],"global":[...]} when there are.
      const j = JSON.parse(stdout) as Record<"alarms" | "local" | "global", unknown[] | undefined>;
      return [...(j.alarms ?? []), ...(j.local ?? []), ...(j.global ?? [])];
    },
    async dispose() {
      await keepLogAndRemove(n);
    },
  };
}

export type OwnRabbit = Awaited<ReturnType<typeof ownRabbit>>;

/**
 * A RabbitMQ cluster of three nodes of the test's own, joined as `npm run infra -- rabbitmq
 * start --nodes 3` joins them (infra/rabbitmq/node.ts), each with its management panel on
 * a port of its own.
 */
export async function ownRabbitCluster(name: string) {
  const nodes = await Promise.all([1, 2, 3].map((i) => testNode(`${name}-${i}`, { panel: true })));
  // A cluster that did not form stops what it started, its logs kept: the run of 08:27 on
  // 2026-11-28 left two nodes running after the third never answered.
  await startRabbitCluster(nodes, shopConfig().rabbit, () => {}).catch(async (error: unknown) => {
    await Promise.all(nodes.map((n) => keepLogAndRemove(n).catch(() => {})));
    throw error;
  });
  return {
    nodes,
    /** The services' settings: every node, tried in turn (BROKER_NODES), vhost `/`. */
    env(): Record<string, string> {
      const r = shopConfig().rabbit;
      return {
        BROKER_HOST: "127.0.0.1",
        BROKER_VHOST: "/",
        ...clusterAddresses(nodes),
        BROKER_MONITOR_USER: r.monitor.user,
        BROKER_MONITOR_PASSWORD: r.monitor.password,
      };
    },
    /** The Erlang VMs' pids. */
    pids: () => nodes.map((n) => Number(readFileSync(n.env.RABBITMQ_PID_FILE, "utf8").trim())),
    async dispose() {
      await Promise.all(nodes.map(keepLogAndRemove));
    },
  };
}

export type OwnRabbitCluster = Awaited<ReturnType<typeof ownRabbitCluster>>;
