import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "../../infra/config.ts";

/** A line of a Node.js stack trace, which a person should never be shown. */
export const STACK_FRAME = /^\s+at .+[:(]/m;

export interface ToolRun {
  code: number | null;
  out: string;
  err: string;
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
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, entry), ...args], {
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
