import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { checkoutId, ROOT } from "../../../infra/config.ts";
import { withAdmin } from "../../helpers/kafka.ts";

/**
 * Runs one experiment of `npm run lab` as a person runs it (a process, any free port for
 * the orders service) and returns its exit status, its PASS and FAIL lines and its output.
 */
export function runExperiment(
  name: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; pass: string[]; fail: string[]; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "lab/src/main.ts"), name, "--port", "0"],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: "1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    child.once("exit", (code) => {
      const lines = output.split("\n");
      resolve({
        code,
        pass: lines.filter((l) => l.startsWith("PASS ")),
        fail: lines.filter((l) => l.startsWith("FAIL ")),
        output,
      });
    });
  });
}

/** The topics of this checkout's runs of the experiment (prefix lab-<name>-<checkout id>) on the shop's Kafka. */
async function labTopics(name: string): Promise<string[]> {
  const topics = await withAdmin(shopConfig().kafka.brokers.join(","), (a) => a.listTopics());
  return topics.filter((t) => t.startsWith(`lab-${name}-${checkoutId()}`)).sort();
}

/**
 * An experiment that passed: exit 0, no FAIL, the PASS lines it promises, in under 4
 * minutes (or `maxMs`), and no topic of its own left on the shop's Kafka. The bound only
 * catches a run that hangs: a machine of 2026-11-27 ran the whole suite 2.3 times slower
 * than the one before it (1,351 s against 576 s), and kafka-down took 128 s there.
 */
export async function expectPassed(
  name: string,
  passes: RegExp[],
  env: Record<string, string> = {},
  maxMs = 240_000,
) {
  const topicsBefore = await labTopics(name);
  const started = Date.now();
  const r = await runExperiment(name, env);
  expect(r.fail, r.output).toEqual([]);
  expect(r.code, r.output).toBe(0);
  expect(r.pass).toHaveLength(passes.length);
  for (const [i, p] of passes.entries()) expect(r.pass[i]).toMatch(p);
  expect(Date.now() - started).toBeLessThan(maxMs);
  const cleanUp = r.output.split("\n").filter((l) => l.includes("ao limpar"));
  expect(
    await labTopics(name),
    `the experiment's topics are deleted at its end${cleanUp.length > 0 ? `; it said: ${cleanUp.join(" ")}` : ""}`,
  ).toEqual(topicsBefore);
  return r;
}
