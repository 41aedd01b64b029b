import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { programArgs } from "../../harness/process.ts";
import { ENTRY_POINTS } from "../../infra/build.ts";
import { ROOT } from "../../infra/config.ts";

/** A line of a Node.js stack trace, which a person should never be shown. */
export const STACK_FRAME = /^\s+at .+[:(]/m;

export interface ToolRun {
  code: number | null;
  out: string;
  err: string;
}

/**
 * What node runs for one of the shop's tools: a program that has a bundle (the analytics
 * and dead-letter CLIs, infra/build.ts) runs as the services do (programArgs: built under
 * the tests' SHOP_CONSTRUIDO=1, 0.3 s of CPU a run against 0.8 s through tsx, and the two
 * CLIs' files run them some fifty times); the others (infra, lab, bench) through tsx, as
 * `npm run` runs them. The lab page's replay action still runs the analytics source
 * through tsx (web/test/integration/lab-page.test.ts), as `npm run analytics` does.
 */
export function toolArgs(entry: string): string[] {
  const bundled = Object.values(ENTRY_POINTS).includes(entry as never);
  return bundled
    ? programArgs(entry.replace(/\/src\/main\.ts$/, ""))
    : ["--import", "tsx", join(ROOT, entry)];
}

/**
 * One of the shop's command-line tools (a TypeScript entry point under the repository) run
 * as a person runs it, with `env` over this process's environment.
 */
export function runTool(
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): Promise<ToolRun> {
  const child = spawn(process.execPath, [...toolArgs(entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: timeoutMs,
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c;
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err })));
}

/** The run ended with `code` and said `sentence` on stderr, with no stack frame anywhere. */
export function expectSentence(run: ToolRun, code: number, sentence: RegExp): void {
  expect(run.out + run.err).not.toMatch(STACK_FRAME);
  expect(run.err, run.out).toMatch(sentence);
  expect(run.code, run.err).toBe(code);
}
