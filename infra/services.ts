import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type InfraConfig, type Log, ROOT } from "./config.ts";
import { userCluster } from "./rabbitmq/node.ts";
import { panelUrl } from "./rabbitmq/rabbitmq.ts";

/** One deployable of an edition, run by `npm start` / `npm run start:broker`. */
export interface Service {
  name: string;
  /** Workspace folder; the service runs there. */
  dir: string;
  /** What node runs, relative to dir: `src/main.ts` through tsx unless given. */
  args?: string[];
  env?: Record<string, string>;
  url?: string;
}

export interface Shop {
  title: string;
  needsKafka: boolean;
  services: Service[];
  urls: (config: InfraConfig) => Record<string, string>;
}

/** The web page (Vite's dev server); it finds which edition answers on 8080. */
const WEB: Service = {
  name: "web",
  dir: "web",
  args: [join(ROOT, "node_modules/vite/bin/vite.js"), "--port", "5173", "--strictPort"],
  url: "http://localhost:5173",
};

export const SHOPS = {
  eventLog: {
    title: "event-log edition (Kafka)",
    needsKafka: true,
    services: [
      { name: "orders-api", dir: "orders-api", url: "http://127.0.0.1:8080/pedidos" },
      // Named by its instance, as the ones the page's lab starts beside it (caixa-2, caixa-3).
      { name: "caixa-1", dir: "payments", url: "http://127.0.0.1:5001/saude" },
      WEB,
    ],
    urls: (c) => ({ kafka: c.kafka.brokers.join(","), "rabbitmq panel": panelUrl(c.rabbit) }),
  },
  broker: {
    title: "broker edition (RabbitMQ)",
    needsKafka: false,
    services: [
      { name: "orders", dir: "broker/orders", url: "http://127.0.0.1:8080" },
      { name: "payments", dir: "broker/payments", url: "http://127.0.0.1:8081/saude" },
      WEB,
    ],
    urls: (c): Record<string, string> => {
      // On BROKER_CLUSTER_SIZE=3 the services use the cluster's nodes, not the machine's.
      if (c.rabbit.clusterSize <= 1)
        return {
          amqp: `amqp://${c.rabbit.host}:${c.rabbit.port}`,
          "rabbitmq panel": panelUrl(c.rabbit),
        };
      const nodes = userCluster(c.rabbit.clusterSize);
      return {
        amqp: nodes.map((n) => `amqp://127.0.0.1:${n.ports.amqp}`).join(" "),
        "rabbitmq panels": nodes.map((n) => `http://127.0.0.1:${n.ports.panel}`).join(" "),
      };
    },
  },
} satisfies Record<string, Shop>;

/**
 * The event-log shop with `instances` orders APIs on ports 8080, 8082, … sharing the
 * PostgreSQL database `databaseUrl` (issue 37: ORDERS_INSTANCES or `--instances`).
 */
export function withOrdersInstances(shop: Shop, instances: number, databaseUrl: string): Shop {
  const services = shop.services.flatMap((s) =>
    s.name !== "orders-api"
      ? [s]
      : Array.from({ length: instances }, (_, i) => ({
          ...s,
          name: `orders-api-${i + 1}`,
          env: {
            ...s.env,
            PORTA: String(8080 + 2 * i),
            DATABASE_URL: databaseUrl,
            INSTANCIA: String(i + 1),
          },
          url: `http://127.0.0.1:${8080 + 2 * i}/pedidos`,
        })),
  );
  return { ...shop, services };
}

/**
 * What `npm start` adds to each service's environment: text logs, which a person reads
 * (a service's own output is a pipe to us, where it would default to JSON), in colour on a
 * terminal; plain text when npm start itself is piped (an editor's console, `| tee`), as
 * a person still reads it there. JSON is for tools and asked for: LOG_FORMAT=json, as the
 * compose file and the Docker image run the services. LOG_FORMAT, NO_COLOR or FORCE_COLOR
 * given by the person win.
 */
export function outputEnv(terminal: boolean, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  if (!env.LOG_FORMAT) out.LOG_FORMAT = "text";
  if (terminal && env.NO_COLOR === undefined && env.FORCE_COLOR === undefined) {
    out.FORCE_COLOR = "1";
  }
  return out;
}

/** Each service's prefix, in a colour of its own when the output is coloured. */
const PREFIX_COLOURS = [36, 35, 33, 32, 34];
export function prefixOf(name: string, index: number, coloured: boolean): string {
  const colour = PREFIX_COLOURS[index % PREFIX_COLOURS.length];
  return coloured ? `\u001b[${colour}m[${name}]\u001b[39m ` : `[${name}] `;
}

const built = (s: Service) =>
  existsSync(join(ROOT, s.dir, s.args ? "package.json" : join("src", "main.ts")));
const nodeArgs = (s: Service) => s.args ?? ["--import", "tsx", join(ROOT, s.dir, "src", "main.ts")];

/**
 * Signals a process and what it started in its process group (each is started detached, a
 * group of its own): an experiment stopped while it starts a service takes that one along.
 */
function groupKill(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    child.kill(signal);
  }
}

/** True while any process is left in the child's process group. */
export function groupAlive(child: ChildProcess): boolean {
  try {
    process.kill(-(child.pid as number), 0);
    return true;
  } catch {
    return false;
  }
}

/** One process `npm start` started: at start, or later from the page's lab. */
export interface OwnedProcess {
  name: string;
  child: ChildProcess;
  /** SIGSTOP'd and not yet continued. */
  paused: boolean;
  /** Resolves with the exit code (or the signal's name) once it has exited. */
  exited: Promise<number | string>;
}

/**
 * The processes one `npm start` owns: the only ones the page's lab may signal (by name,
 * never by pid), and all of them stopped when npm start stops, so none outlives the shop.
 */
/** How long npm start's Ctrl-C waits for a process to end on SIGTERM before SIGKILL. */
export const STOP_GRACE_MS = 20_000;

export class ShopProcesses {
  private readonly owned = new Map<string, OwnedProcess>();
  private index = 0;
  private readonly output: Record<string, string>;
  private readonly coloured: boolean;

  constructor(private readonly log: Log) {
    const terminal = process.stdout.isTTY === true;
    this.output = outputEnv(terminal, process.env);
    this.coloured = terminal && process.env.NO_COLOR === undefined;
  }

  /**
   * Starts a service under `name` (unique among the running ones), its lines prefixed on
   * npm start's output, or handed to `onLine` instead (the page's lab shows them).
   */
  start(s: Service, name = s.name, onLine?: (line: string) => void): OwnedProcess {
    if (this.running(name)) throw new Error(`${name} is running already`);
    const child = spawn(process.execPath, nodeArgs(s), {
      cwd: join(ROOT, s.dir),
      env: { ...process.env, ...this.output, ...s.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: Ctrl-C reaches only us, and we pass on one SIGTERM.
      detached: true,
    });
    const prefix = prefixOf(name, this.index++, this.coloured);
    // Whole lines: a chunk of a pipe may end mid-line, and the prefix must not land there.
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
        if (line === "") return;
        if (onLine) onLine(line);
        else this.log(prefix + line);
      });
    }
    const exited = new Promise<number | string>((resolve) =>
      child.once("exit", (code, signal) => resolve(code ?? signal ?? 0)),
    );
    const owned: OwnedProcess = { name, child, paused: false, exited };
    this.owned.set(name, owned);
    return owned;
  }

  /** The running process of that name, if this npm start started one and it has not exited. */
  running(name: string): OwnedProcess | null {
    const p = this.owned.get(name);
    return p && p.child.exitCode === null && p.child.signalCode === null ? p : null;
  }

  /** Every process started so far, running or not. */
  all(): OwnedProcess[] {
    return [...this.owned.values()];
  }

  /**
   * Sends a signal to a process this npm start started (SIGCONT first when it is paused, so
   * that a SIGTERM is handled now, not when someone continues it).
   */
  signal(name: string, signal: NodeJS.Signals): OwnedProcess {
    const p = this.running(name);
    if (!p) throw new Error(`${name} is not a running process of this npm start`);
    if (p.paused && signal !== "SIGSTOP") groupKill(p.child, "SIGCONT");
    p.paused = signal === "SIGSTOP";
    groupKill(p.child, signal);
    return p;
  }

  /**
   * Stops every process still running (SIGTERM to its group) and waits until all have
   * exited. What is left in their groups 5 s later (a service an experiment was still
   * starting when it was stopped) is killed: nothing npm start started outlives it.
   */
  async stopAll(): Promise<void> {
    for (const p of this.owned.values()) if (this.running(p.name)) this.signal(p.name, "SIGTERM");
    const exited = Promise.all([...this.owned.values()].map((p) => p.exited));
    // A process still cleaning up after STOP_GRACE_MS (an experiment undoing what it started
    // on a loaded machine) is killed with its group: Ctrl-C of npm start always ends.
    const inTime = await Promise.race([
      exited.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), STOP_GRACE_MS).unref()),
    ]);
    if (!inTime)
      for (const p of this.owned.values()) if (this.running(p.name)) groupKill(p.child, "SIGKILL");
    await exited;
    const deadline = Date.now() + 5000;
    let left = [...this.owned.values()].filter((p) => groupAlive(p.child));
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = left.filter((p) => groupAlive(p.child));
    }
    for (const p of left) groupKill(p.child, "SIGKILL");
  }
}

/** Something `npm start` runs beside its services and closes at its end: the page's lab. */
export interface Companion {
  /** Extra environment for the services (the web page's VITE_LAB_URL). */
  env: Record<string, string>;
  /** A service's address as the banner shows it, where the companion changes it (the page's, with its token). */
  urls: Record<string, string>;
  /** Lines for the banner. */
  banner: Record<string, string>;
  close(): Promise<void>;
}

/** A shop started by startServices: its processes, its companion, and how to stop both. */
export interface StartedShop<C extends Companion = Companion> {
  processes: ShopProcesses;
  lab: C | null;
  /** The services started at first (not those the lab started later). */
  started: OwnedProcess[];
  /** Closes the companion, then stops every process still running and waits for them. */
  stop(): Promise<void>;
}

/**
 * Starts the built services of a shop and prints its URLs. With `companion`, the page's lab
 * is started first (it owns the same processes) and closed first at the stop.
 */
export async function startServices<C extends Companion>(
  shop: Shop,
  config: InfraConfig,
  log: Log,
  companion?: (processes: ShopProcesses) => Promise<C>,
): Promise<StartedShop<C>> {
  const ready = shop.services.filter(built);
  const missing = shop.services.filter((s) => !built(s));
  const processes = new ShopProcesses(log);
  const lab = companion && ready.length > 0 ? await companion(processes) : null;
  const started = ready.map((s) => processes.start({ ...s, env: { ...lab?.env, ...s.env } }));

  log(`\nThe ${shop.title} is up:`);
  for (const [name, url] of Object.entries(shop.urls(config))) log(`  ${name.padEnd(16)} ${url}`);
  for (const s of ready) {
    const url = lab?.urls[s.name] ?? s.url;
    if (url) log(`  ${s.name.padEnd(16)} ${url}`);
  }
  for (const [name, line] of Object.entries(lab?.banner ?? {})) log(`  ${name.padEnd(16)} ${line}`);
  if (missing.length > 0) {
    log(`  not built yet:   ${missing.map((s) => s.dir).join(", ")}`);
  }
  return {
    processes,
    lab,
    started,
    async stop() {
      await lab?.close();
      await processes.stopAll();
    },
  };
}

/**
 * npm start's runner: starts the shop (startServices) and stops it all on Ctrl-C, or ends
 * when every service it started has exited on its own.
 */
export async function runServices(
  shop: Shop,
  config: InfraConfig,
  log: Log,
  companion?: (processes: ShopProcesses) => Promise<Companion>,
): Promise<number> {
  const running = await startServices(shop, config, log, companion);
  if (running.started.length === 0) return 0;
  log(
    "Press Ctrl-C to stop the services (the brokers keep running; `npm run infra -- down` stops them).",
  );
  // The services run in process groups of their own, so a closed terminal's SIGHUP reaches
  // only us: pass it on too, or they would outlive the terminal and keep their ports.
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, resolve);
  });
  const allExited = Promise.all(running.started.map((p) => p.exited));
  const codes = await Promise.race([allExited, stopped.then(() => null)]);
  await running.stop();
  return codes?.some((c) => c !== 0) ? 1 : 0;
}
