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
 * A long test's body as named steps, under a deadline of its own set below the test's
 * timeout: when the deadline passes, the test fails with the step it was on and how long
 * each step before it took, where vitest's timeout says only "Test timed out". A clean
 * clone's CI (2026-12-02) timed the page's first test out at 90 s; alone it takes 8 s, and
 * 11 s beside four busy cores, so nothing told which wait had hung.
 */
export async function inSteps<T>(
  deadlineMs: number,
  body: (step: (name: string) => void) => Promise<T>,
): Promise<T> {
  const taken: string[] = [];
  let current = "the start";
  let since = Date.now();
  const step = (name: string) => {
    taken.push(`${current} ${((Date.now() - since) / 1000).toFixed(1)} s`);
    current = name;
    since = Date.now();
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `still at "${current}" (${((Date.now() - since) / 1000).toFixed(1)} s) when the test's ${deadlineMs / 1000} s ran out; before it: ${taken.join(", ") || "nothing"}`,
          ),
        ),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([body(step), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
