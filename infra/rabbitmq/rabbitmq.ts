import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { amqpUrl as buildAmqpUrl, rabbitProblem } from "@shop/amqp";
import { shopPermissions } from "@shop/contracts";
import amqp from "amqplib";
import { type InfraConfig, type Log, ROOT } from "../config.ts";

/**
 * Makes sure a real RabbitMQ answers with the management plugin on the loopback only.
 * Reuses one that is running; otherwise starts Debian's rabbitmq-server, installing it
 * with apt-get when it is absent and we are root. Creates BROKER_ADMIN_USER and BROKER_USER.
 */
type RabbitSettings = InfraConfig["rabbit"];

const MARKER = join(ROOT, "infra", "rabbitmq", ".started-by-infra");
const RABBIT_CONF = "/etc/rabbitmq/rabbitmq.conf";

/** True when something on host:port speaks AMQP 0-9-1 (answers the protocol header). */
export function amqpAnswers(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write(Buffer.from([65, 77, 81, 80, 0, 0, 9, 1])));
    // A method frame (type 1) carrying connection.start.
    socket.once("data", (chunk) => done(chunk[0] === 1));
  });
}

/** The services' AMQP URL (their user), to a vhost. */
export function amqpUrl(r: RabbitSettings, vhost = r.vhost): string {
  return buildAmqpUrl({ ...r, vhost });
}

/** The administrator's AMQP URL, for tools that declare queues of their own (PerfTest). */
export function amqpUrlAdmin(r: RabbitSettings, vhost = r.vhost): string {
  return buildAmqpUrl({ ...r, ...r.admin, vhost });
}

export function panelUrl(r: RabbitSettings): string {
  return `http://${r.host}:${r.panelPort}`;
}

/** Calls the management HTTP API as the administrator. */
export async function managementApi(
  r: RabbitSettings,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const auth = Buffer.from(`${r.admin.user}:${r.admin.password}`).toString("base64");
  return fetch(`${panelUrl(r)}/api${path}`, {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
}

/**
 * Runs one of RabbitMQ's tools (rabbitmqctl, rabbitmq-plugins) to its end, bounded.
 * Asynchronous: each starts an Erlang VM (a second or more), and the process that asks (the
 * test run's setup, `npm start` with its services' output) keeps working meanwhile.
 */
async function run(
  cmd: string,
  args: string[],
  log?: Log,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === "number" ? error.code : null) : 0;
      if (log && status !== 0)
        log(`rabbitmq: ${cmd} ${args.join(" ")} failed: ${stderr || error?.message}`);
      resolve({ status, stdout, stderr });
    });
  });
}

function hasCommand(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).status === 0;
}

const isRoot = () => process.getuid?.() === 0;

function installServer(log: Log): void {
  if (!isRoot()) {
    throw new Error(
      "rabbitmq: rabbitmq-server is not installed and this is not root. Install it with " +
        "`sudo apt-get install rabbitmq-server` or run the Docker alternative (docs/docker.md).",
    );
  }
  log("rabbitmq: installing Debian's rabbitmq-server with apt-get...");
  for (const args of [
    ["update"],
    ["install", "-y", "--no-install-recommends", "rabbitmq-server"],
  ]) {
    const r = spawnSync("apt-get", args, {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.status !== 0) throw new Error(`rabbitmq: apt-get ${args.join(" ")} failed`);
  }
}

/** The panel listens on 127.0.0.1 only, also after a later restart of the server. */
function pinPanelToLoopbackInConfig(log: Log): void {
  if (!isRoot()) return;
  const current = existsSync(RABBIT_CONF) ? readFileSync(RABBIT_CONF, "utf8") : "";
  if (/^management\.tcp\.ip\s*=/m.test(current)) return;
  const sep = current === "" || current.endsWith("\n") ? "" : "\n";
  writeFileSync(RABBIT_CONF, `${current}${sep}management.tcp.ip = 127.0.0.1\n`);
  log(`rabbitmq: pinned the management panel to 127.0.0.1 in ${RABBIT_CONF}`);
}

async function managementEnabled(): Promise<boolean> {
  const r = await run("rabbitmq-plugins", ["is_enabled", "rabbitmq_management"]);
  return r.status === 0;
}

async function enableManagement(r: RabbitSettings, log: Log): Promise<void> {
  if (await managementEnabled()) return;
  // Set the listener before the plugin starts, so that no restart is needed.
  await run(
    "rabbitmqctl",
    [
      "eval",
      `application:set_env(rabbitmq_management, tcp_config, [{ip, "127.0.0.1"}, {port, ${r.panelPort}}]).`,
    ],
    log,
  );
  const result = await run("rabbitmq-plugins", ["enable", "rabbitmq_management"], log);
  if (result.status !== 0) throw new Error("rabbitmq: could not enable rabbitmq_management");
  log("rabbitmq: enabled the management plugin on 127.0.0.1");
}

/**
 * A user with this password, created or updated. `--` ends rabbitmqctl's options, so that
 * a password that begins with "-" (a generated base64url one may) is not read as a flag.
 */
export async function ensureUser(user: string, password: string, log: Log): Promise<void> {
  if ((await run("rabbitmqctl", ["authenticate_user", "--", user, password])).status === 0) return;
  const users = (await run("rabbitmqctl", ["list_users", "--quiet", "--no-table-headers"])).stdout;
  const exists = users.split("\n").some((line) => line.split(/\s+/)[0] === user);
  const result = exists
    ? await run("rabbitmqctl", ["change_password", "--", user, password], log)
    : await run("rabbitmqctl", ["add_user", "--", user, password], log);
  if (result.status !== 0) throw new Error(`rabbitmq: could not set up user ${user}`);
  log(`rabbitmq: ${exists ? "updated the password of" : "created"} user ${user}`);
}

/** The shop's users and their passwords: what every place that makes them needs. */
export type ShopUsers = Pick<RabbitSettings, "admin" | "monitor" | "user" | "password">;

/**
 * The monitoring user's permission on the vhost: nothing ("^$" matches no name). The entry
 * itself is what lets the management API show it the vhost's queues.
 */
export const MONITOR_PERMISSION = "^$";

/**
 * Who gets what, in one place for infra, the tests' nodes and vhosts. The administrator
 * (BROKER_ADMIN_USER, tag administrator) is infra's, the tests' and the benchmarks', with
 * every right on the vhost. The services' user (BROKER_USER) has no tag and only the shop's
 * own exchanges and queues (shopPermissions). The monitoring user (BROKER_MONITOR_USER) reads
 * the management API for the broker panel and may touch no message.
 */
export function shopGrants(u: ShopUsers) {
  const none = {
    configure: MONITOR_PERMISSION,
    write: MONITOR_PERMISSION,
    read: MONITOR_PERMISSION,
  };
  return [
    {
      ...u.admin,
      tags: ["administrator"],
      permissions: { configure: ".*", write: ".*", read: ".*" },
    },
    { user: u.user, password: u.password, tags: [], permissions: shopPermissions() },
    { ...u.monitor, tags: ["monitoring"], permissions: none },
  ];
}

/** The shop's users on the machine's RabbitMQ, created or updated, with their grants on BROKER_VHOST. */
async function ensureUsers(r: RabbitSettings, log: Log): Promise<void> {
  for (const g of shopGrants(r)) {
    await ensureUser(g.user, g.password, log);
    await run("rabbitmqctl", ["set_user_tags", g.user, ...g.tags], log);
    const p = g.permissions;
    await run(
      "rabbitmqctl",
      ["set_permissions", "-p", r.vhost, g.user, p.configure, p.write, p.read],
      log,
    );
  }
}

/**
 * True when the panel answers and every user of shopGrants is as it should be: its password
 * opens an AMQP connection to the vhost, its tags and its permissions there are the ones
 * given. Read in a fraction of a second over the management API and AMQP, where the nine
 * rabbitmqctl calls of ensureUsers (an Erlang VM each) took 4-9 s at each test project's
 * start, every time (issue 55). Anything else, or anything unreadable, is false: then
 * rabbitmqctl makes them so.
 */
async function usersInPlace(r: RabbitSettings): Promise<boolean> {
  try {
    if (!(await panelAnswers(r))) return false;
    const vhost = encodeURIComponent(r.vhost);
    for (const g of shopGrants(r)) {
      const conn = await amqp.connect(buildAmqpUrl({ ...r, user: g.user, password: g.password }));
      await conn.close();
      const user = encodeURIComponent(g.user);
      const found = (await (await managementApi(r, "GET", `/users/${user}`)).json()) as {
        tags?: string | string[];
      };
      const tags = typeof found.tags === "string" ? found.tags.split(",") : (found.tags ?? []);
      const wanted = g.tags;
      if (tags.filter(Boolean).sort().join() !== [...wanted].sort().join()) return false;
      const res = await managementApi(r, "GET", `/permissions/${vhost}/${user}`);
      if (res.status !== 200) return false;
      const p = (await res.json()) as { configure: string; write: string; read: string };
      const want = g.permissions;
      if (p.configure !== want.configure || p.write !== want.write || p.read !== want.read)
        return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every 300 ms until it is true, or fails after `timeoutMs` saying what did not happen. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`rabbitmq: ${what} did not happen within ${timeoutMs / 1000} s`);
}

/** Whether the management panel answers the administrator; a refusal ends the wait at once. */
async function panelAnswers(r: RabbitSettings): Promise<boolean> {
  let status: number;
  try {
    status = (await managementApi(r, "GET", "/overview")).status;
  } catch {
    return false;
  }
  if (status === 401 || status === 403)
    throw new Error(
      `rabbitmq: the management panel at ${panelUrl(r)} refused the administrator ${r.admin.user} (${status}): check BROKER_ADMIN_USER and BROKER_ADMIN_PASSWORD in .env`,
    );
  return status >= 200 && status < 300;
}

export async function startRabbit(
  r: RabbitSettings,
  log: Log,
): Promise<{ reused: boolean; ms: number }> {
  const started = Date.now();
  const local = r.host === "127.0.0.1" || r.host === "localhost";
  let reused = true;
  if (!(await amqpAnswers(r.host, r.port))) {
    if (!local)
      throw new Error(
        `rabbitmq: nothing answers on ${r.host}:${r.port}; infra starts RabbitMQ only on this machine (127.0.0.1): start it there, or correct BROKER_HOST and BROKER_PORT in .env`,
      );
    if (!hasCommand("rabbitmq-server")) installServer(log);
    pinPanelToLoopbackInConfig(log);
    log("rabbitmq: starting rabbitmq-server...");
    const s = await run("rabbitmq-server", ["-detached"], log);
    if (s.status !== 0) throw new Error("rabbitmq: rabbitmq-server -detached failed");
    writeFileSync(MARKER, new Date().toISOString());
    reused = false;
    await waitFor("AMQP start-up", () => amqpAnswers(r.host, r.port), 120_000);
    await run("rabbitmqctl", ["await_startup", "--timeout", "120"], log);
  } else {
    log(`rabbitmq: reusing the server that answers on ${r.host}:${r.port}`);
  }
  if (local && hasCommand("rabbitmqctl")) {
    pinPanelToLoopbackInConfig(log);
    if (!(await usersInPlace(r))) {
      await enableManagement(r, log);
      await ensureUsers(r, log);
    }
  }
  await waitFor("the management panel answering", () => panelAnswers(r), 60_000);
  const connection = await amqp.connect(amqpUrl(r)).catch((error: unknown) => {
    throw new Error(`rabbitmq: ${rabbitProblem(r, error)}`, { cause: error });
  });
  await connection.close();
  return { reused, ms: Date.now() - started };
}

/** Stops the server only if this script started it. */
export async function stopRabbit(log: Log): Promise<{ stopped: boolean }> {
  if (!existsSync(MARKER)) {
    log("rabbitmq: not started by infra; leaving it running");
    return { stopped: false };
  }
  await run("rabbitmqctl", ["stop"], log);
  rmSync(MARKER, { force: true });
  log("rabbitmq: stopped");
  return { stopped: true };
}
