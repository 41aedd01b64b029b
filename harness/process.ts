import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { join } from "node:path";
import { type ConsumerEventMap, Database, waitFor } from "@shop/service";
import { bundlePath, entryOf, NODE_FLAGS, nodeFlagsOf } from "../infra/build.ts";
import { ROOT } from "../infra/config.ts";
import { runLogDir } from "./logs.ts";

/**
 * The shop's programs run as real processes, and their databases read beside them: what
 * the lab's experiments, the tests and the benchmarks drive the shop with.
 */

/**
 * What node runs for a service folder: its source through tsx, or, with SHOP_CONSTRUIDO=1
 * (the benchmarks, after `npm run build`), the bundle in dist/ that production runs.
 */
export function programArgs(dir: string): string[] {
  if (process.env.SHOP_CONSTRUIDO === "1") {
    const name = entryOf(dir);
    const file = bundlePath(name);
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build`);
    return [...nodeFlagsOf(name), file];
  }
  return ["--import", "tsx", join(ROOT, dir, "src", "main.ts")];
}

/** The structured (JSON) log lines among a process's output lines; other lines are skipped. */
export function logRecords(lines: string[]): Record<string, unknown>[] {
  return lines.flatMap((l) => {
    if (!l.startsWith("{")) return [];
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The line every service (and the bare-Express baseline) prints once it accepts requests. */
const LISTENING = /listening on http:\/\//;

/** A service run as a real process (node + tsx), with its output kept for assertions. */
export class ServiceProcess {
  /** Where each process's output is kept too: SHOP_TEST_LOG_DIR, which the fault suite sets. */
  static logDir: () => string | null = runLogDir;
  /** Called with every line of every process: with SHOP_TEST_LOGS=1, printed. */
  static echo: ((name: string, line: string) => void) | null = process.env.SHOP_TEST_LOGS
    ? (name, line) => console.log(`[${name}] ${line}`)
    : null;

  readonly lines: string[] = [];
  private readonly listeners: ((line: string) => void)[] = [];
  private exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    // Where the tests keep logs (the fault suite's SHOP_TEST_LOG_DIR): every line also goes to
    // a file of its own there, so that a run that failed or hung on CI leaves its story.
    const dir = ServiceProcess.logDir();
    const file = dir
      ? createWriteStream(
          join(dir, `${new Date().toISOString().slice(11, 19)}-${name}-${child.pid}.log`),
        )
      : null;
    if (file) child.once("exit", () => file.end());
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      let partial = "";
      stream?.on("data", (chunk: string) => {
        const parts = (partial + chunk).split("\n");
        partial = parts.pop() ?? "";
        for (const line of parts) {
          this.lines.push(line);
          file?.write(`${line}\n`);
          ServiceProcess.echo?.(name, line);
          for (const listener of this.listeners) listener(line);
        }
      });
    }
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** Starts the service in `dir` and waits until it prints that it is listening. */
  static start(name: string, dir: string, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
    return ServiceProcess.run(name, programArgs(dir), env, join(ROOT, dir));
  }

  /**
   * Starts a TypeScript file (a benchmark's bare program) and waits until it prints that it
   * is listening. Beside built services (SHOP_CONSTRUIDO=1) it runs as they do: without
   * tsx's loader (Node's own type stripping; the bare programs import only packages and
   * each other) and with the services' V8 settings, so that a twin's CPU and memory are
   * compared like for like (issue 49). Otherwise through tsx, as the services are.
   */
  static startScript(
    name: string,
    file: string,
    env: NodeJS.ProcessEnv,
    cwd = ROOT,
  ): Promise<ServiceProcess> {
    const args =
      process.env.SHOP_CONSTRUIDO === "1" ? [...NODE_FLAGS, file] : ["--import", "tsx", file];
    return ServiceProcess.run(name, args, env, cwd);
  }

  private static async run(
    name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    cwd: string,
  ): Promise<ServiceProcess> {
    // SHOP_CPU_PROF=<dir>: each service writes a V8 CPU profile there when it exits
    // (`npm run bench -- --profile`).
    const prof = process.env.SHOP_CPU_PROF;
    // One folder per service: tsx's loader thread writes a profile of its own there too.
    const profiling = prof ? ["--cpu-prof", `--cpu-prof-dir=${join(prof, name)}`] : [];
    const child = spawn(process.execPath, [...profiling, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const service = new ServiceProcess(name, child);
    await service.waitForLine(LISTENING, 60_000);
    return service;
  }

  /** Calls `listener` with each line the process prints from now on. */
  onLine(listener: (line: string) => void): void {
    this.listeners.push(listener);
  }

  async waitForLine(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    return waitFor(() => this.lines.find((l) => pattern.test(l)), {
      timeoutMs,
      what: `${this.name} to print ${pattern}\n--- output so far:\n${this.lines.slice(-20).join("\n")}`,
    });
  }

  /**
   * The consumer wrapper's events of one name this process has printed so far: its log
   * lines carry the event's name in the field `evento` (a field, not the line's wording).
   */
  events(name: keyof ConsumerEventMap): Record<string, unknown>[] {
    return logRecords(this.lines).filter((r) => r.evento === name);
  }

  /** The URL the service printed as listening. */
  url(): string {
    const line = this.lines.find((l) => LISTENING.test(l)) ?? "";
    return (line.match(/listening on (http:\/\/[^\s"]+)/) as RegExpMatchArray)[1] as string;
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  kill(): Promise<number | null> {
    return this.stop("SIGKILL");
  }
}

/** Rows an SQL count query (`SELECT COUNT(*) AS n ...`) finds in a service's own database, read beside it. */
export function countRows(path: string, sql: string, ...params: unknown[]): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(sql).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Rows an SQL query finds in a service's own database, read beside it. */
export function queryRows<T>(path: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The analytics CLI reading to the current end, printing its summary as JSON. */
export function analyticsCli(brokers: string, prefix: string, grupo: string) {
  return {
    args: [...programArgs("analytics"), "--until-caught-up", "--json", "--quiet"],
    env: { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: prefix, GRUPO: grupo },
  };
}
