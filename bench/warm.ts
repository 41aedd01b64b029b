import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { load } from "./intake.ts";
import { benchPipeline } from "./pipeline.ts";
import { deleteTopics, measureJit } from "./stats.ts";

/**
 * Runs `round` until the brokers' JIT compilers take under a fifth of the brokers' CPU in
 * two rounds running (a single calm round came between busy ones), at most `most` rounds.
 */
async function untilCalm(
  what: string,
  pids: readonly number[],
  most: number,
  round: () => Promise<string>,
  log: (l: string) => void,
) {
  let calm = 0;
  for (let n = 1; n <= most && calm < 2; n++) {
    const jit = measureJit(pids);
    const done = await round();
    const share = jit.share();
    log(`${what} round ${n}: ${done}, JIT compilers ${Math.round(share * 100)}% of Kafka's CPU`);
    calm = share < 0.2 ? calm + 1 : 0;
  }
}

/**
 * Loads the shop on `brokers`, unmeasured, until the brokers' JVMs have compiled their hot
 * paths: 10 s rounds of order intake (the producing path), then bursts of the pipeline
 * (consumer groups, fetches, offset commits). A fresh Kafka JVM compiles for about a
 * minute of load: three fresh brokers measured at once gave 0.23-0.37 of a warm single
 * broker (docs/benchmarks.md, "Warm brokers"). Every figure on Kafka is taken warm.
 */
export async function warmKafka(
  what: string,
  brokers: string,
  pids: readonly number[],
  log: (l: string) => void,
): Promise<void> {
  const prefix = uniquePrefix("warm");
  const api = await ServiceProcess.start("orders-api", "orders-api", {
    ...serviceEnv(prefix, { DB_PATH: tempDb("warm") }),
    KAFKA_BROKERS: brokers,
  });
  try {
    await untilCalm(
      `${what}: warm-up, intake`,
      pids,
      12,
      async () => `${Math.round((await load(api.url(), 10, 64)).rps)} req/s`,
      log,
    );
  } finally {
    await api.stop();
    await deleteTopics(brokers, prefix);
  }
  await untilCalm(
    `${what}: warm-up, pipeline`,
    pids,
    6,
    async () => {
      const [burst] = await benchPipeline({
        orders: 3000,
        steadySeconds: 0,
        intakeRps: 0,
        brokers,
        log: () => {},
        burstOnly: true,
        withBare: false,
      });
      return `${Math.round(burst?.value ?? 0)} orders/s`;
    },
    log,
  );
}
