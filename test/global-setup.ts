import { loadDotEnv } from "@shop/service";
import { madeSince } from "../harness/env.ts";
import { ensureChromium } from "../infra/browser.ts";
import { buildBundles } from "../infra/build.ts";
import { ensureEnvFile, readInfraConfig } from "../infra/config.ts";
import {
  ensureClassArchive,
  kafkaAnswers,
  SHORT_LIVED_JVM,
  startKafka,
} from "../infra/kafka/kafka.ts";
import { kafkaUsers, stopKafkaUnlessUsed } from "../infra/kafka/users.ts";
import { startRabbit } from "../infra/rabbitmq/rabbitmq.ts";
import { deleteTopicsWhere } from "./helpers/kafka.ts";
/**
 * Brings the real brokers up through infra/ before the integration tests. Afterwards it
 * deletes the topics this run's tests made (their names carry uniqueName's time stamp:
 * one run left about 240 behind, and Kafka kept every one), then stops only the Kafka
 * broker that it started itself, and only when no other run (a second checkout's) uses it.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const since = Date.now();
  ensureEnvFile();
  loadDotEnv();
  const config = readInfraConfig();
  const log = (line: string) => console.log(`[global-setup] ${line}`);
  ensureChromium(log);
  // Written by npm run setup; here too for a checkout that skipped it (once, about 5 s).
  await ensureClassArchive(log);
  // The services the tests start run built, as production runs them (SHOP_CONSTRUIDO=1 in
  // vitest.config.ts): tsx compiled each one again at every start, half a second of CPU
  // each, some 250 starts a run. Built once per run here, before any test starts one
  // (each project runs this file; the first builds).
  if (process.env.SHOP_BUNDLES_BUILT !== "1") {
    const builtAt = Date.now();
    await buildBundles();
    process.env.SHOP_BUNDLES_BUILT = "1";
    log(`services built to dist/ in ${Date.now() - builtAt} ms`);
  }
  const [kafka, rabbit] = await Promise.all([
    // A broker for one run: the quick compiler only and the serial collector, as a test's
    // own brokers (SHORT_LIVED_JVM). Over a clean clone's run it took 14 s of CPU, 24 s
    // with the full compiler and G1 (process accounting, 2026-11-29).
    startKafka(config.kafka, log, { jvm: SHORT_LIVED_JVM }),
    startRabbit(config.rabbit, log),
  ]);
  const using = kafkaUsers(config.kafka).join();
  log(
    `kafka ${kafka.reused ? "reused" : "started"} in ${kafka.ms} ms; ` +
      `rabbitmq ${rabbit.reused ? "reused" : "started"} in ${rabbit.ms} ms`,
  );
  return async () => {
    using.leave();
    // Two projects (integration, faults) run this file; the first teardown deletes the
    // run's topics and stops a broker it started. The second then finds none to ask, and
    // kafkajs retried for 15 s before printing a stack trace ("error during close").
    if (!(await kafkaAnswers(config.kafka))) {
      log("kafka already stopped by the other project's teardown: nothing left to delete");
      return;
    }
    const deleted = await deleteTopicsWhere(config.kafka.brokers.join(","), (t) =>
      madeSince(t, since),
    );
    log(`deleted the ${deleted} topics this run's tests made`);
    if (!kafka.reused) await stopKafkaUnlessUsed(config.kafka, log);
  };
}
