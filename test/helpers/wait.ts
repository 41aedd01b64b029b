import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ConsumerEventMap, ConsumerEvents } from "@shop/service";

/** Waits for a condition instead of sleeping (libs/service, shared with the lab). */
export { waitFor } from "@shop/service";

/**
 * The events of one name a broker wrapper emits from now on (ConsumerEvents of
 * libs/kafka's startConsumer or libs/amqp's startConsumer), kept in order for a test to wait on.
 */
export function collect<K extends keyof ConsumerEventMap>(
  eventos: ConsumerEvents,
  nome: K,
): ConsumerEventMap[K][0][] {
  const vistos: ConsumerEventMap[K][0][] = [];
  // biome-ignore lint/suspicious/noExplicitAny: node's typed EventEmitter needs the listener's exact tuple
  eventos.on(nome, ((e: ConsumerEventMap[K][0]) => vistos.push(e)) as any);
  return vistos;
}

/**
 * Marks a step of a scenario in SHOP_TEST_LOG_DIR/steps.log (the fault suite sets it) with
 * its time: where a run that failed or hung on CI stopped, beside the services' and the
 * brokers' logs of the same directory.
 */
export function step(scenario: string, what: string): void {
  const dir = testLogDir();
  if (!dir) return;
  appendFileSync(join(dir, "steps.log"), `${new Date().toISOString()} ${scenario}: ${what}\n`);
}

/**
 * Where a run keeps its logs (SHOP_TEST_LOG_DIR, which the fault suite sets), created when
 * needed; null when the run keeps none.
 */
export function testLogDir(): string | null {
  const dir = process.env.SHOP_TEST_LOG_DIR;
  if (!dir) return null;
  mkdirSync(dir, { recursive: true });
  return dir;
}
