import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type ConsumerEventMap, type ConsumerEvents, withTimeLimit } from "@shop/service";

type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/** Waits for a condition instead of sleeping: polls until check returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 15_000, intervalMs = 50, what = "the condition" } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      // A check that never settles (a client waiting on a dead broker) must not outlive the
      // deadline: it is raced against the time left, so the wait fails instead of hanging.
      const value = await withTimeLimit(
        Promise.resolve().then(check),
        Math.max(deadline - Date.now(), 1),
        () => new Error("the check itself did not answer in time"),
      );
      if (value) return value as Truthy<T>;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

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
