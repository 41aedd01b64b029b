import type { ConsumerEventMap, ConsumerEvents } from "@shop/service";

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
      const value = await check();
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
