import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { deleteTopicsWhere } from "../../../harness/kafka.ts";
import { ROOT } from "../../../infra/config.ts";
import { groupAlive } from "../../../infra/services.ts";
import { serviceEnv, uniquePrefix } from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/**
 * Issue 47: a payments instance started by hand, as docs/event-log.md says
 * (`INSTANCIA=caixa-2 PORTA=5002 npm start -w payments`), prints lines a person reads, even
 * when its output is a pipe (an editor's console, `| tee`); JSON only when asked.
 */
function firstLines(env: Record<string, string>): Promise<string[]> {
  const clean = { ...process.env, ...env };
  if (!("LOG_FORMAT" in env)) delete clean.LOG_FORMAT;
  const child = spawn("npm", ["start", "--silent", "-w", "payments"], {
    cwd: ROOT,
    env: clean,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-(child.pid as number), "SIGTERM");
      reject(new Error(`no listening line in 60 s:\n${lines.join("\n")}`));
    }, 60_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      if (/listening on http/.test(line)) {
        clearTimeout(timer);
        process.kill(-(child.pid as number), "SIGTERM");
        // npm exits before the service under it has left its group: until the whole group
        // is gone, its consumer may still ask for its topics, which Kafka (auto.create)
        // makes again after the clean-up below deleted them (a CI run's 15 s wait ended
        // with them listed, 2026-11-29).
        child.once("exit", () =>
          waitFor(() => !groupAlive(child), { timeoutMs: 30_000, what: "payments to exit" }).then(
            () => resolve(lines),
            reject,
          ),
        );
      }
    });
  });
}

describe("Issue 47: a service started by hand reads well", () => {
  it("When payments is started by hand with its output piped, then its lines are text for a person; with LOG_FORMAT=json, JSON", async () => {
    const prefix = uniquePrefix("hand");
    const env = serviceEnv(prefix, { INSTANCIA: "caixa-9" }) as Record<string, string>;
    try {
      const text = await firstLines(env);
      const listening = text.find((l) => l.includes("listening on http")) as string;
      expect(listening.startsWith("{")).toBe(false);
      expect(listening).toMatch(/INFO.*payments caixa-9 listening on http:\/\/127\.0\.0\.1:\d+/);
      const json = await firstLines({ ...env, LOG_FORMAT: "json" });
      const record = JSON.parse(json.find((l) => l.includes("listening on http")) as string);
      expect(record).toMatchObject({ level: "info" });
    } finally {
      await deleteTopicsWhere(env.KAFKA_BROKERS as string, (t) => t.startsWith(prefix));
    }
  }, 150_000);
});
