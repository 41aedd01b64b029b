import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type InfraConfig, type Log, ROOT } from "./config.ts";
import { panelUrl } from "./rabbitmq/rabbitmq.ts";

/** One deployable of an edition, run by `npm start` / `npm run start:broker`. */
interface Service {
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

export const SHOPS = {
  eventLog: {
    title: "event-log edition (Kafka)",
    needsKafka: true,
    services: [
      { name: "orders-api", dir: "orders-api", url: "http://127.0.0.1:8080/pedidos" },
      { name: "payments", dir: "payments", url: "http://127.0.0.1:5001/saude" },
      {
        name: "web",
        dir: "web",
        args: [join(ROOT, "node_modules/vite/bin/vite.js"), "--port", "5173", "--strictPort"],
        url: "http://localhost:5173",
      },
    ],
    urls: (c) => ({ kafka: c.kafka.brokers.join(","), "rabbitmq panel": panelUrl(c.rabbit) }),
  },
  broker: {
    title: "broker edition (RabbitMQ)",
    needsKafka: false,
    services: [
      { name: "orders", dir: "broker/orders", url: "http://127.0.0.1:8080" },
      { name: "payments", dir: "broker/payments" },
    ],
    urls: (c) => ({
      amqp: `amqp://${c.rabbit.host}:${c.rabbit.port}`,
      "rabbitmq panel": panelUrl(c.rabbit),
    }),
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

/** Starts the built services of a shop, prints its URLs, and stops them on Ctrl-C. */
export async function runServices(shop: Shop, config: InfraConfig, log: Log): Promise<number> {
  const ready = shop.services.filter(built);
  const missing = shop.services.filter((s) => !built(s));
  const terminal = process.stdout.isTTY === true;
  const output = outputEnv(terminal, process.env);
  const coloured = terminal && process.env.NO_COLOR === undefined;
  const children: ChildProcess[] = ready.map((s, index) => {
    const child = spawn(process.execPath, nodeArgs(s), {
      cwd: join(ROOT, s.dir),
      env: { ...process.env, ...output, ...s.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: Ctrl-C reaches only us, and we pass on one SIGTERM.
      detached: true,
    });
    const prefix = prefixOf(s.name, index, coloured);
    // Whole lines: a chunk of a pipe may end mid-line, and the prefix must not land there.
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
        if (line !== "") log(prefix + line);
      });
    }
    return child;
  });

  log(`\nThe ${shop.title} is up:`);
  for (const [name, url] of Object.entries(shop.urls(config))) log(`  ${name.padEnd(16)} ${url}`);
  for (const s of ready) if (s.url) log(`  ${s.name.padEnd(16)} ${s.url}`);
  if (missing.length > 0) {
    log(`  not built yet:   ${missing.map((s) => s.dir).join(", ")}`);
  }
  if (children.length === 0) return 0;
  log(
    "Press Ctrl-C to stop the services (the brokers keep running; `npm run infra -- down` stops them).",
  );

  const stop = () => {
    for (const child of children) child.kill("SIGTERM");
  };
  // The services run in process groups of their own, so a closed terminal's SIGHUP reaches
  // only us: pass it on too, or they would outlive the terminal and keep their ports.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, stop);
  const codes = await Promise.all(
    children.map((c) => new Promise<number>((res) => c.once("exit", (code) => res(code ?? 0)))),
  );
  return codes.some((c) => c !== 0) ? 1 : 0;
}
