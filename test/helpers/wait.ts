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
