import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";

function infra(...args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "infra/cli.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe("infra/ from the command line", () => {
  it("When Kafka already answers, then a second start reuses it instead of starting another", () => {
    const result = infra("kafka", "start");
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/kafka: reusing the broker that answers on/);
    expect(result.stdout).toMatch(/ready in \d+ ms \(reused\)/);
  });

  it("When RabbitMQ already answers, then start reuses it and the configured user can log in", () => {
    const result = infra("rabbitmq", "start");
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/rabbitmq: reusing the server/);
  });

  it("When asked for status, then both brokers say they answer", () => {
    expect(infra("kafka", "status").stdout).toMatch(/kafka: answering/);
    expect(infra("rabbitmq", "status").stdout).toMatch(/rabbitmq: answering/);
  });

  it("When given an unknown command, then it says how to use it and exits 2", () => {
    const result = infra("frobnicate");
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/unknown command/);
  });
});
