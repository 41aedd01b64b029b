import { describe, expect, it } from "vitest";
import { runTool } from "../../helpers/cli.ts";

const infra = (...args: string[]) => runTool("infra/cli.ts", args);

describe("infra/ from the command line", () => {
  it("When Kafka already answers, then a second start reuses it instead of starting another", async () => {
    const result = await infra("kafka", "start");
    expect(result.code, result.err).toBe(0);
    expect(result.out).toMatch(/kafka: reusing the broker that answers on/);
    expect(result.out).toMatch(/ready in \d+ ms \(reused\)/);
  });

  it("When RabbitMQ already answers, then start reuses it and the configured user can log in", async () => {
    const result = await infra("rabbitmq", "start");
    expect(result.code, result.err).toBe(0);
    expect(result.out).toMatch(/rabbitmq: reusing the server/);
  });

  it("When asked for status, then both brokers say they answer", async () => {
    expect((await infra("kafka", "status")).out).toMatch(/kafka: answering/);
    expect((await infra("rabbitmq", "status")).out).toMatch(/rabbitmq: answering/);
  });

  it("When given an unknown command, then it says how to use it and exits 2", async () => {
    const result = await infra("frobnicate");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/unknown command/);
  });
});
