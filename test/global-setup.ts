import { loadDotEnv } from "@shop/service";
import { ensureChromium } from "../infra/browser.ts";
import { ensureEnvFile, readInfraConfig } from "../infra/config.ts";
import { startKafka, stopKafka } from "../infra/kafka/kafka.ts";
import { startRabbit } from "../infra/rabbitmq/rabbitmq.ts";

/**
 * Brings the real brokers up through infra/ before the integration tests, and stops
 * afterwards only the Kafka broker that it started itself.
 */
export default async function setup(): Promise<() => Promise<void>> {
  ensureEnvFile();
  loadDotEnv();
  const config = readInfraConfig();
  const log = (line: string) => console.log(`[global-setup] ${line}`);
  ensureChromium(log);
  const [kafka, rabbit] = await Promise.all([
    startKafka(config.kafka, log),
    startRabbit(config.rabbit, log),
  ]);
  log(
    `kafka ${kafka.reused ? "reused" : "started"} in ${kafka.ms} ms; ` +
      `rabbitmq ${rabbit.reused ? "reused" : "started"} in ${rabbit.ms} ms`,
  );
  return async () => {
    if (!kafka.reused) await stopKafka(log);
  };
}
