import { execFile, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type InfraConfig, type Log, ROOT } from "../config.ts";
import { amqpAnswers, type ShopUsers, shopGrants, waitFor } from "./rabbitmq.ts";

const execFileAsync = promisify(execFile);

/**
 * How long a blank node joining a seed as it boots has to answer before it is booted again
 * (rabbitNode's start): one joins in 3-10 s, on a busy machine too.
 */
const SEEDED_WAIT_MS = 45_000;

/** Where a node listens: AMQP, Erlang distribution and (optional) management panel. */
export interface NodePorts {
  amqp: number;
  distribution: number;
  panel?: number;
  /** An amqps:// listener, with `tls` files given to rabbitNode. */
  tls?: number;
}

/** A TLS listener's files (PEM): the CA, the server's certificate and its key. */
export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * One RabbitMQ node of Debian's rabbitmq-server beside the machine-wide one: its own node
 * name (`<name>@localhost`), ports, data and log folders under `dir`, and plugins (only the
 * management panel, when given a panel port). It never touches the server on 5672.
 * Started by root, the server runs as the rabbitmq user, so `dir` becomes that user's.
 */
export function rabbitNode(name: string, dir: string, ports: NodePorts, tls?: TlsFiles) {
  const node = `${name.replace(/[^a-z0-9-]/gi, "")}@localhost`;
  const dataDir = join(dir, "mnesia");
  const logDir = join(dir, "log");
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(ports.amqp),
    RABBITMQ_DIST_PORT: String(ports.distribution),
    RABBITMQ_MNESIA_BASE: dataDir,
    RABBITMQ_LOG_BASE: logDir,
    RABBITMQ_PID_FILE: join(dir, "rabbit.pid"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq"),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, "advanced.config"),
  };

  /**
   * Where a blank node reads the shop's users as it boots. Kept: `rabbitmqctl start_app`
   * imports it again (the node's settings still name it), and it holds what the node's own
   * database beside it holds, the passwords' salted hashes, readable by its user alone.
   */
  const usersFile = join(dir, "users.json");

  /** The shop's users as definitions in usersFile, for the node's boot or an import. */
  function writeUsers(users: ShopUsers) {
    writeFileSync(usersFile, JSON.stringify(usersDefinitions(users)), { mode: 0o600 });
    toRabbitmqUser(usersFile);
  }

  function prepare(seed?: string, users?: ShopUsers) {
    mkdirSync(dir, { recursive: true });
    if (users) writeUsers(users);
    writeFileSync(join(dir, "enabled_plugins"), ports.panel ? "[rabbitmq_management].\n" : "[].\n");
    // A quorum queue member that lost its leader and whose first pre-vote failed asks again
    // after aten's poll interval + up to 1 s (ra 2.2, ra_server_proc `long` timeout), and
    // RabbitMQ 3.10 runs aten at 5 s (`rabbitmqctl eval 'application:get_env(aten,
    // poll_interval).'` answers {ok,5000}). When a majority returns, the member that can win
    // is often the one that stayed up (it holds the last entry the old leader sent before it
    // stopped; the returning one's pre-vote is declined), so the queue waited for its next
    // try: 3.5 to 5 s in 3 of 8 tries, and "two of three RabbitMQ nodes stopped" resumed in
    // 3.6 to 4.5 s in 4 of 8 suite runs (issue 55). At aten's own default of 1 s, the same 8
    // tries resumed within 1.1 s. The nodes are on one machine: a shorter poll costs nothing.
    writeFileSync(join(dir, "advanced.config"), "[{aten, [{poll_interval, 1000}]}].\n");
    writeFileSync(
      join(dir, "rabbitmq.conf"),
      [
        `listeners.tcp.default = 127.0.0.1:${ports.amqp}`,
        "loopback_users = none",
        // A blank node given a seed joins the seed's cluster as it boots (peer discovery from
        // this list): no rabbitmqctl stop_app, reset, join_cluster, start_app (four Erlang
        // VMs). A node that has data already is in its cluster and ignores it.
        ...(seed
          ? [
              "cluster_formation.peer_discovery_backend = classic_config",
              `cluster_formation.classic_config.nodes.1 = ${seed}`,
              `cluster_formation.classic_config.nodes.2 = ${node}`,
            ]
          : []),
        // The shop's users, imported as the node boots, before its listeners open (RabbitMQ
        // loads users, vhosts and grants ahead of its empty-database check): no rabbitmqctl
        // import_definitions afterwards, an Erlang VM of about a second of CPU at every
        // node's start.
        ...(users ? [`load_definitions = ${usersFile}`] : []),
        ...(ports.panel
          ? [`management.tcp.ip = 127.0.0.1`, `management.tcp.port = ${ports.panel}`]
          : []),
        ...(ports.tls && tls
          ? [
              `listeners.ssl.default = 127.0.0.1:${ports.tls}`,
              `ssl_options.cacertfile = ${tls.caFile}`,
              `ssl_options.certfile = ${tls.certFile}`,
              `ssl_options.keyfile = ${tls.keyFile}`,
              "ssl_options.verify = verify_none",
              "ssl_options.fail_if_no_peer_cert = false",
            ]
          : []),
        "",
      ].join("\n"),
    );
    toRabbitmqUser(dir);
  }

  /** Started by root, the server and its CLI run as the rabbitmq user: what they read becomes theirs. */
  function toRabbitmqUser(path: string) {
    if (process.getuid?.() !== 0) return;
    const uid = spawnSync("id", ["-u", "rabbitmq"], { encoding: "utf8" }).stdout.trim();
    const gid = spawnSync("id", ["-g", "rabbitmq"], { encoding: "utf8" }).stdout.trim();
    if (uid) chownSync(path, Number(uid), Number(gid));
  }

  /**
   * rabbitmqctl against this node; bounded, so that a node gone away fails instead of
   * hanging. Asynchronous: rabbitmqctl starts an Erlang VM (a second or more), and the
   * process that asks (a fault test with its proxies and clocks, the lab) keeps working.
   */
  const ctl = async (...args: string[]): Promise<string> => {
    try {
      const { stdout } = await execFileAsync("rabbitmqctl", ["-n", node, ...args], {
        env,
        encoding: "utf8",
        timeout: 60_000,
      });
      return stdout;
    } catch (error) {
      const e = error as Error & { stdout?: string; stderr?: string };
      throw new Error(
        `rabbitmqctl -n ${node} ${args.join(" ")}: ${e.stderr || e.stdout || e.message}`,
      );
    }
  };
  const answers = () => amqpAnswers("127.0.0.1", ports.amqp);

  /** The tail of the node's own log, for an error that says why it did not answer. */
  function logTail(lines = 12): string {
    const file = join(logDir, `${node}.log`);
    if (!existsSync(file)) return "(no log)";
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  }

  async function boot() {
    try {
      await execFileAsync("rabbitmq-server", ["-detached"], { env, encoding: "utf8" });
    } catch (error) {
      const e = error as Error & { stderr?: string };
      throw new Error(`rabbitmq-server -detached (${node}): ${e.stderr || e.message}`);
    }
  }

  async function untilAnswers(ms: number) {
    try {
      await waitFor(`node ${node} answering AMQP`, answers, ms);
    } catch (error) {
      throw new Error(`${(error as Error).message}; its log ends:\n${logTail()}`);
    }
  }

  const rabbit = {
    node,
    ports,
    env,
    dir,
    ctl,
    answers,
    /**
     * Starts the node in the background (its folder written first) and waits for AMQP;
     * given a `seed` (a running node's name), a blank node joins the seed's cluster as it
     * boots; given `users`, a blank node has the shop's users on `/` when it answers (a
     * node that answers already is left as it is: addUsers).
     */
    async start({ seed, users }: { seed?: string; users?: ShopUsers } = {}) {
      if (await answers()) return;
      prepare(seed, users);
      await boot();
      if (!seed) return untilAnswers(90_000);
      try {
        await untilAnswers(SEEDED_WAIT_MS);
      } catch (error) {
        // Once in some twenty cluster starts a blank node joining `seed` as it booted never
        // answered AMQP (2026-11-28 08:27, and 2026-11-29 02:50 with the nodes started one
        // after another): stopped, emptied and booted again, it is given one more try.
        const first = (error as Error).message;
        await rabbit.stop();
        rmSync(dataDir, { recursive: true, force: true });
        await boot();
        await untilAnswers(90_000).catch((again: Error) => {
          throw new Error(`${again.message} (booted twice; the first time: ${first})`);
        });
      }
    },
    /**
     * The shop's users on `/`, made (again) on this node, with their grants: one import of
     * definitions (usersDefinitions), where a rabbitmqctl call per user, tag and grant took
     * ten Erlang VMs, 7 s of CPU, at every node's start (issue 55).
     */
    async addUsers(users: ShopUsers) {
      // The same file a boot reads (not removed: a node started with users names it).
      writeUsers(users);
      await ctl("-q", "import_definitions", usersFile);
    },
    /** Joins the cluster of `other` (this node's data is reset first). */
    async join(other: string) {
      await ctl("stop_app");
      await ctl("reset");
      await ctl("join_cluster", other);
      await ctl("start_app");
      await waitFor(`node ${node} answering in the cluster`, answers, 60_000);
    },
    /** A graceful stop of the application (the Erlang node stays up), as `rabbitmqctl stop_app`. */
    async stopApp() {
      await ctl("stop_app");
      await waitFor(`node ${node} to stop answering`, async () => !(await answers()), 15_000);
    },
    async startApp() {
      await ctl("start_app");
      await waitFor(`node ${node} to answer again`, answers, 60_000);
    },
    /** kill -9 of the node's Erlang VM, as a crash would: no goodbye to any client. */
    async kill() {
      const pid = Number(readFileSync(env.RABBITMQ_PID_FILE, "utf8").trim());
      process.kill(pid, "SIGKILL");
      await waitFor(`node ${node} to stop answering`, async () => !(await answers()), 15_000);
    },
    /**
     * Stops the whole node (VM included); quiet when it is already down. SIGTERM, which the
     * Erlang VM takes as `init:stop()`, the orderly shutdown rabbitmqctl stop asks for,
     * without starting an Erlang VM for the CLI; rabbitmqctl stop when it does not end in 30 s.
     */
    async stop(log: Log = () => {}) {
      if (!existsSync(env.RABBITMQ_PID_FILE)) return;
      const pid = Number(readFileSync(env.RABBITMQ_PID_FILE, "utf8").trim());
      const alive = () => {
        try {
          // The VM's command line does not name the node; the environment it started with does.
          return readFileSync(`/proc/${pid}/environ`, "utf8")
            .split("\0")
            .includes(`RABBITMQ_NODENAME=${node}`);
        } catch {
          return false;
        }
      };
      if (!Number.isInteger(pid) || !alive()) return;
      process.kill(pid, "SIGTERM");
      try {
        await waitFor(`node ${node} to stop`, async () => !alive(), 30_000);
      } catch {
        await ctl("stop").catch(() => {});
      }
      log(`rabbitmq: stopped ${node}`);
    },
    /** Deletes the node's folder (data and logs); it must be stopped. */
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return rabbit;
}

export type RabbitNode = ReturnType<typeof rabbitNode>;

/**
 * RabbitMQ's hash of a password (rabbit_password_hashing_sha256, its default): a random
 * 4-byte salt, then SHA-256 of salt and password, in base64. What a definitions file
 * carries in place of the password itself.
 */
export function passwordHash(password: string, salt = randomBytes(4)): string {
  const digest = createHash("sha256").update(salt).update(password, "utf8").digest();
  return Buffer.concat([salt, digest]).toString("base64");
}

/** The shop's users and their grants on `/` as RabbitMQ definitions (import_definitions). */
export function usersDefinitions(users: ShopUsers) {
  const grants = shopGrants(users);
  return {
    users: grants.map((g) => ({
      name: g.user,
      password_hash: passwordHash(g.password),
      hashing_algorithm: "rabbit_password_hashing_sha256",
      tags: g.tags,
      limits: {},
    })),
    vhosts: [{ name: "/" }],
    permissions: grants.map((g) => ({ user: g.user, vhost: "/", ...g.permissions })),
  };
}

/**
 * Three nodes joined into one cluster (the second and third join the first), the shop's
 * users made on it. The Erlang cookie is the rabbitmq user's, the same for every node.
 */
export async function startRabbitCluster(nodes: RabbitNode[], users: ShopUsers, log: Log) {
  const answered = await Promise.all(nodes.map((n) => n.answers()));
  const [first, ...others] = nodes as [RabbitNode, ...RabbitNode[]];
  // The first, then the others one after the other, each joining the first as it boots.
  // Both at once, a clean-clone run of 2026-11-28 (08:27) saw the third never answer AMQP
  // in 90 s: two nodes joining one seed at the same moment is a race RabbitMQ can lose.
  await first.start({ users });
  for (const n of others) await n.start({ seed: first.node });
  const running = async () => {
    try {
      return (
        JSON.parse(await first.ctl("-q", "cluster_status", "--formatter", "json")) as {
          running_nodes: string[];
        }
      ).running_nodes;
    } catch {
      return [];
    }
  };
  // Each cluster_status is an Erlang VM: the last one read is kept, and read again only
  // after a join by hand.
  let members: string[] = [];
  const all = async () => {
    members = await running();
    return others.every((n) => members.includes(n.node));
  };
  try {
    await waitFor("the nodes to join the first as they boot", all, 20_000);
  } catch {
    // A node that was up already on its own (a cluster left half-made): joined by hand.
    for (const n of others) {
      if ((await running()).includes(n.node)) continue;
      log(`rabbitmq: ${n.node} joins ${first.node}`);
      await n.join(first.node);
    }
    members = await running();
  }
  // A first node that answered before this start kept the users it had: made again.
  if (answered[0]) await first.addUsers(users);
  return { running: members, reused: answered.every(Boolean) };
}

/**
 * The cluster `npm run infra -- rabbitmq start --nodes 3` runs beside the machine's
 * RabbitMQ: nodes shop-1..3@localhost, AMQP on 5682..5684, panels on 15682..15684,
 * distribution on 25682..25684, folders in infra/rabbitmq/.work/.
 */
export function userCluster(size = 3): RabbitNode[] {
  return Array.from({ length: size }, (_, i) =>
    rabbitNode(`shop-${i + 1}`, join(ROOT, "infra", "rabbitmq", ".work", `shop-${i + 1}`), {
      amqp: 5682 + i,
      distribution: 25682 + i,
      panel: 15682 + i,
    }),
  );
}

/** The services' settings for the user's cluster: every node, tried in turn. */
export function clusterAddresses(nodes: RabbitNode[]) {
  return {
    BROKER_NODES: nodes.map((n) => `127.0.0.1:${n.ports.amqp}`).join(","),
    BROKER_PORT: String(nodes[0]?.ports.amqp),
    BROKER_PANEL_URL: nodes.map((n) => `http://127.0.0.1:${n.ports.panel}`).join(","),
  };
}

/** Starts (or reuses) the user's cluster with the shop's users, and says where it is. */
export async function startUserCluster(r: InfraConfig["rabbit"], log: Log) {
  const started = Date.now();
  const nodes = userCluster(r.clusterSize);
  const { running, reused } = await startRabbitCluster(nodes, r, log);
  log(
    `rabbitmq: cluster of ${running.length} (${running.join(", ")}) on ${clusterAddresses(nodes).BROKER_NODES}, panels ${nodes.map((n) => `http://127.0.0.1:${n.ports.panel}`).join(" ")}`,
  );
  return { nodes, reused, ms: Date.now() - started };
}
