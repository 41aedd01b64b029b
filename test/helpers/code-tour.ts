import { readFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "../../infra/config.ts";

/**
 * The code tours (docs/code-tour.md, docs/code-tour-broker.md) follow paths file by file.
 * Their tests run each path and read V8's own call counts (precise coverage, as
 * `node --experimental-test-coverage` reads them) to learn which of the shop's files it
 * entered: a refactor that moves a step to another file fails until the tour says so.
 */

export class CallCounter {
  private readonly session = new Session();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post("Profiler.enable");
    await this.session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  }

  async stop(): Promise<void> {
    await this.session.post("Profiler.stopPreciseCoverage").catch(() => {});
    this.session.disconnect();
  }

  /** Calls since the last look, per function of the shop (file#offset), not counting loads. */
  private async callsSinceLast(): Promise<Map<string, number>> {
    const { result } = await this.session.post("Profiler.takePreciseCoverage");
    const calls = new Map<string, number>();
    for (const script of result) {
      const file = script.url.replace(/^file:\/\//, "").replace(/\?.*$/, "");
      if (!file.startsWith(`${ROOT}/`) || file.includes("/node_modules/")) continue;
      const relative = file.slice(ROOT.length + 1);
      if (relative.startsWith("test/") || relative.startsWith("harness/")) continue;
      for (const f of script.functions) {
        const range = f.ranges[0];
        // A script's top level starts at offset 0: its load, not a call.
        if (range && range.count > 0 && range.startOffset > 0)
          calls.set(`${relative}#${range.startOffset}`, range.count);
      }
    }
    return calls;
  }

  /**
   * The shop's files with a function that `work` called more often than the service did
   * while idle, until `idle` resolves: the caller waits there for the service's periodic
   * work (the outbox relay's rounds, by its own counter) to run at least twice, so that a
   * round during `work` is not taken for its path. A service with no shop code on a timer
   * passes nothing: its idle calls are none, and any extra file fails the tour.
   */
  async filesEnteredBy(
    work: () => Promise<void>,
    idle: () => Promise<void> = async () => {},
  ): Promise<Set<string>> {
    await this.callsSinceLast();
    await idle();
    const idleCalls = await this.callsSinceLast();
    await work();
    const busy = await this.callsSinceLast();
    const files = new Set<string>();
    for (const [fn, n] of busy)
      if (n > (idleCalls.get(fn) ?? 0)) files.add(fn.split("#")[0] as string);
    return files;
  }
}

/** The files a table of a tour names, under the heading that starts with `title`. */
export function tourFiles(doc: string, title: string): string[] {
  const tour = readFileSync(join(ROOT, doc), "utf8");
  const start = tour.indexOf(`## ${title}`);
  expect(start, `${doc}: ## ${title}`).toBeGreaterThan(0);
  const section = tour.slice(start).split("\n## ")[0] as string;
  const files = section
    .split("\n")
    .filter((l) => /^\| \d+ \|/.test(l))
    .map((l) => /\]\(\.\.\/([^)]+)\)/.exec(l)?.[1] as string);
  return [...new Set(files)];
}

/**
 * The files entered under `own` (the services the tour is about) must be the tour's
 * exactly; the tour's other files (libs/, contracts/) must have been entered.
 */
export function expectTour(entered: Set<string>, named: string[], own: string): void {
  const ours = (files: Iterable<string>) => [...files].filter((f) => f.startsWith(own)).sort();
  expect(ours(named).length, `the tour names files of ${own}`).toBeGreaterThan(0);
  expect(ours(entered)).toEqual(ours(named));
  for (const f of named) expect(entered, `${f} (named by the tour)`).toContain(f);
}
