import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { ownKafka } from "../../../harness/own-kafka.ts";
import { TcpProxy } from "../../../harness/tcp-proxy.ts";
import { kafkaAnswers } from "../../../infra/kafka/kafka.ts";
import { freePort } from "../../../infra/ports.ts";
import { expectSentence, runTool } from "../../helpers/cli.ts";

/**
 * Issue 34.3: infra, the lab and the benchmarks end on a sentence and an exit status, never
 * a stack trace, for each input a person meets (the dlq and analytics CLIs have theirs in
 * their own test files).
 */
const infra = (args: string[], env?: NodeJS.ProcessEnv) => runTool("infra/cli.ts", args, env);
const lab = (args: string[]) => runTool("lab/src/main.ts", args);
const bench = (args: string[], env?: NodeJS.ProcessEnv) => runTool("bench/run.ts", args, env);

describe("Issue 34.3: an unknown argument is named, with the usage, exit 2", () => {
  it("When infra is given an unknown sub-command, then it says so", async () => {
    expectSentence(await infra(["kafka", "frob"]), 2, /^unknown command: kafka frob$/m);
  });

  it("When the lab is given an unknown option or experiment, or a port that is no number, then it says so", async () => {
    expectSentence(await lab(["--bogus"]), 2, /bogus/);
    expectSentence(await lab(["nada"]), 2, /^lab: no experiment named "nada"/m);
    expectSentence(await lab(["rebalance", "--port", "abc"]), 2, /--port takes a port number/);
  });

  it("When the benchmarks are given an unknown option or benchmark, then they say so before starting anything; --help prints the usage", async () => {
    const unknown = await bench(["--bogus"]);
    expectSentence(unknown, 2, /^bench: Unknown option '--bogus'/m);
    expect(unknown.err).toMatch(/^usage: npm run bench/m);
    expect(unknown.out).not.toMatch(/kafka|rabbitmq/);
    expectSentence(await bench(["--only=nada"]), 2, /^bench: unknown benchmark "nada"/m);
    const help = await bench(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: npm run bench/m);
  });
});

/**
 * A RabbitMQ that looks remote to infra (127.0.0.2, a proxy in front of the machine's), so
 * that infra does not make the users again as it does on the machine's own server.
 */
describe("Issue 34.3: a RabbitMQ that refuses the credentials, or does not answer", () => {
  let amqpProxy: TcpProxy;
  let panelProxy: TcpProxy;
  let remote: NodeJS.ProcessEnv;
  beforeAll(async () => {
    const r = shopConfig().rabbit;
    amqpProxy = await TcpProxy.start(r.host, r.port, undefined, "amqp", "127.0.0.2");
    panelProxy = await TcpProxy.start(r.host, r.panelPort, undefined, "amqp", "127.0.0.2");
    remote = {
      BROKER_HOST: "127.0.0.2",
      BROKER_PORT: String(amqpProxy.port),
      BROKER_PANEL_PORT: String(panelProxy.port),
    };
  });
  afterAll(async () => {
    await amqpProxy?.close();
    await panelProxy?.close();
  });

  it("When the administrator's password is wrong, then infra and the benchmarks say the panel refused the administrator, exit 1", async () => {
    const env = { ...remote, BROKER_ADMIN_PASSWORD: "wrong" };
    const refused =
      /rabbitmq: the management panel at http:\/\/127\.0\.0\.2:\d+ refused the administrator \S+ \(401\): check BROKER_ADMIN_USER and BROKER_ADMIN_PASSWORD/;
    expectSentence(await infra(["rabbitmq", "start"], env), 1, refused);
    expectSentence(await bench(["--only=broker", "--quick"], env), 1, refused);
  });

  it("When the services' password is wrong, then infra says RabbitMQ refused the connection and what to check, exit 1", async () => {
    const run = await infra(["rabbitmq", "start"], { ...remote, BROKER_PASSWORD: "wrong" });
    expectSentence(
      run,
      1,
      /rabbitmq: RabbitMQ at 127\.0\.0\.2:\d+: RabbitMQ refused the connection \(BROKER_USER, BROKER_PASSWORD, BROKER_VHOST\)/,
    );
  });

  it("When nothing answers where BROKER_HOST and BROKER_PORT say, then infra names the address and what to check, exit 1", async () => {
    const run = await infra(["rabbitmq", "start"], {
      ...remote,
      BROKER_PORT: String(await freePort()),
    });
    expectSentence(run, 1, /^rabbitmq: nothing answers on 127\.0\.0\.2:\d+/m);
  });
});

describe("Issue 34.3: a tool never stops a broker that others use", () => {
  it("When `infra kafka stop` runs while this test run uses the Kafka, then it names who uses it and leaves it running", async () => {
    const run = await infra(["kafka", "stop"]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^kafka: left running, in use by pid \d+/m);
    expect(await kafkaAnswers(shopConfig().kafka)).toBe(true);
  });

  it("When KAFKA_BROKERS names a broker this checkout's infra did not start there (a test's own, as another checkout's would be), then `infra kafka stop` says so and stops nothing", async () => {
    const other = ownKafka("stop-not-mine");
    try {
      await other.start();
      const run = await infra(["kafka", "stop"], { KAFKA_BROKERS: other.brokers });
      expect(run.code, run.err).toBe(0);
      expect(run.out).toMatch(
        /^kafka: the broker answering on 127\.0\.0\.1:\d+ was not started by this checkout's infra .*: left running$/m,
      );
      // Still there: the next start reuses it instead of starting another.
      expect((await other.start()).reused).toBe(true);
      expect(await kafkaAnswers(shopConfig().kafka)).toBe(true);
    } finally {
      await other.dispose();
    }
  }, 120_000);
});
