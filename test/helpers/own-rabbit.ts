import { spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { amqpUrl } from "@shop/amqp";
import { shopPermissions } from "@shop/contracts";
import { amqpAnswers } from "../../infra/rabbitmq/rabbitmq.ts";
import { testConfig } from "./env.ts";
import { uniqueName } from "./kafka.ts";
import { waitFor } from "./wait.ts";

/** A TCP port nothing listens on now, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A RabbitMQ node of the test's own, from Debian's rabbitmq-server: its own node name,
 * AMQP and distribution ports chosen free at run time, data and log folders, no plugins.
 * A test may stop, restart or kill it without touching the machine-wide RabbitMQ. It has
 * the shop's two users (the services' one with only the topology's permissions) on `/`.
 */
export async function ownRabbit(name: string) {
  const [porta, distribuicao] = [await freePort(), await freePort()];
  const node = `${uniqueName(name).replace(/[^a-z0-9-]/gi, "")}@localhost`;
  const dir = mkdtempSync(join(tmpdir(), "own-rabbit-"));
  writeFileSync(join(dir, "enabled_plugins"), "[].\n");
  writeFileSync(
    join(dir, "rabbitmq.conf"),
    `listeners.tcp.default = 127.0.0.1:${porta}\nloopback_users = none\n`,
  );
  // The server runs as the rabbitmq user when started by root: its folder must be its own.
  if (process.getuid?.() === 0) {
    const id = spawnSync("id", ["-u", "rabbitmq"], { encoding: "utf8" }).stdout.trim();
    const gid = spawnSync("id", ["-g", "rabbitmq"], { encoding: "utf8" }).stdout.trim();
    if (id) chownSync(dir, Number(id), Number(gid));
  }
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(porta),
    RABBITMQ_DIST_PORT: String(distribuicao),
    RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: join(dir, "log"),
    RABBITMQ_PID_FILE: join(dir, "rabbit.pid"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq"),
  };
  const ctl = (...args: string[]) => {
    const r = spawnSync("rabbitmqctl", ["-n", node, ...args], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`rabbitmqctl ${args.join(" ")}: ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  const atende = () => amqpAnswers("127.0.0.1", porta);

  async function iniciar() {
    const r = spawnSync("rabbitmq-server", ["-detached"], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`rabbitmq-server -detached: ${r.stderr}`);
    await waitFor(atende, { timeoutMs: 90_000, intervalMs: 300, what: `RabbitMQ node ${node}` });
  }

  await iniciar();
  const { rabbit } = testConfig();
  const loja = shopPermissions();
  ctl("add_user", rabbit.admin.user, rabbit.admin.password);
  ctl("set_user_tags", rabbit.admin.user, "administrator");
  ctl("set_permissions", "-p", "/", rabbit.admin.user, ".*", ".*", ".*");
  ctl("add_user", rabbit.user, rabbit.password);
  ctl("set_permissions", "-p", "/", rabbit.user, loja.configure, loja.write, loja.read);

  return {
    node,
    porta,
    /** The services' settings for this node (its `/` vhost). */
    env(): Record<string, string> {
      return { BROKER_HOST: "127.0.0.1", BROKER_PORT: String(porta), BROKER_VHOST: "/" };
    },
    /** rabbitmqctl against this node; throws with its output when it fails. */
    ctl,
    /** AMQP URL of the administrator, to `/` on this node. */
    urlAdmin: amqpUrl({ host: "127.0.0.1", port: porta, ...rabbit.admin, vhost: "/" }),
    atende,
    /** A graceful stop of the application (the Erlang node stays up), as `rabbitmqctl stop_app`. */
    async stopApp() {
      ctl("stop_app");
      await waitFor(async () => !(await atende()), { what: `${node} to stop answering` });
    },
    async startApp() {
      ctl("start_app");
      await waitFor(atende, { timeoutMs: 60_000, what: `${node} to answer again` });
    },
    /** kill -9 of the node's Erlang VM, as a crash would: no goodbye to any client. */
    async kill() {
      const pid = Number(readFileSync(env.RABBITMQ_PID_FILE, "utf8").trim());
      process.kill(pid, "SIGKILL");
      await waitFor(async () => !(await atende()), { what: `${node} to stop answering` });
    },
    /** Starts the node again after a kill, on the same ports and data folder. */
    restart: iniciar,
    /**
     * Sets the node's free-disk limit: above the disk's free space it raises the disk
     * alarm, which blocks every publishing connection until it is set back below.
     */
    setDiskFreeLimit(limit: string) {
      ctl("set_disk_free_limit", limit);
    },
    /** The node's resource alarms now (`rabbitmq-diagnostics alarms`), as RabbitMQ names them. */
    alarms(): unknown[] {
      const r = spawnSync(
        "rabbitmq-diagnostics",
        ["-n", node, "-q", "alarms", "--formatter", "json"],
        { env, encoding: "utf8" },
      );
      // {"alarms":[]} when there are none; {"local":[...],"global":[...]} when there are.
      const j = JSON.parse(r.stdout) as Record<
        "alarms" | "local" | "global",
        unknown[] | undefined
      >;
      return [...(j.alarms ?? []), ...(j.local ?? []), ...(j.global ?? [])];
    },
    async dispose() {
      try {
        ctl("stop");
      } catch {
        // already down
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type OwnRabbit = Awaited<ReturnType<typeof ownRabbit>>;

/**
 * A RabbitMQ cluster of three nodes of the test's own (each as ownRabbit: node name, ports
 * and folders of its own), the second and third joined to the first. Their Erlang cookie is
 * the rabbitmq user's, the same for all. The shop's users are the cluster's, so they are
 * made again on the first node after the joins.
 */
export async function ownRabbitCluster(name: string) {
  const nodes = await Promise.all([1, 2, 3].map((i) => ownRabbit(`${name}-${i}`)));
  const [first, ...others] = nodes as [OwnRabbit, OwnRabbit, OwnRabbit];
  for (const n of others) {
    n.ctl("stop_app");
    n.ctl("join_cluster", first.node);
    n.ctl("start_app");
    await waitFor(n.atende, { timeoutMs: 60_000, what: `${n.node} to answer in the cluster` });
  }
  return {
    nodes,
    /** The services' settings: every node, tried in turn (BROKER_NODES), vhost `/`. */
    env(): Record<string, string> {
      return {
        ...first.env(),
        BROKER_NODES: nodes.map((n) => `127.0.0.1:${n.porta}`).join(","),
      };
    },
    /** Each quorum queue's leader and members, as the first node that answers sees them. */
    queues(): { name: string; leader: string; members: string[] }[] {
      for (const n of nodes) {
        try {
          return JSON.parse(
            n.ctl("-q", "list_queues", "name", "leader", "members", "--formatter", "json"),
          ) as { name: string; leader: string; members: string[] }[];
        } catch {
          // that node is down: ask the next
        }
      }
      throw new Error("no node of the cluster answers");
    },
    async dispose() {
      await Promise.all(nodes.map((n) => n.dispose()));
    },
  };
}

export type OwnRabbitCluster = Awaited<ReturnType<typeof ownRabbitCluster>>;
