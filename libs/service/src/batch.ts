import { context } from "@opentelemetry/api";

/**
 * Batches the work handed over in the same turn of the event loop: `run` runs once
 * for all of it, and each caller gets its own result, only once that run has finished.
 * Used for the orders API's group commit (one SQLite transaction for the requests of a
 * turn) and for Kafka publishes (one produce request for the records of a turn).
 *
 * With `whileInFlight`, batching adapts to load: when idle, a turn's items go at once; while
 * a run is in flight, the items handed over meanwhile wait and go together as the next run
 * when it ends. One run at a time, in the order handed over. Light load pays no wait; under
 * load each run carries everything that arrived during the one before (Kafka's payments
 * results: one produce request where a record a turn made many small ones).
 *
 * When a batch fails: with `splitOnFailure` (the default) each item is tried alone, so
 * that one bad item fails only its own caller; without it, every caller gets the error.
 */
export function batchPerTurn<E, R>(
  run: (items: E[]) => R[] | Promise<R[]>,
  { splitOnFailure = true, whileInFlight = false } = {},
): (item: E) => Promise<R> {
  let queue: { item: E; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let running = false;

  async function settle(batch: typeof queue) {
    try {
      const resultados = await run(batch.map((x) => x.item));
      batch.forEach((x, i) => {
        x.resolve(resultados[i] as R);
      });
    } catch (error) {
      for (const x of batch) {
        if (!splitOnFailure) {
          x.reject(error);
          continue;
        }
        try {
          x.resolve(((await run([x.item])) as R[])[0] as R);
        } catch (e) {
          x.reject(e);
        }
      }
    }
  }

  async function flush() {
    if (!whileInFlight) {
      const batch = queue;
      queue = [];
      return settle(batch);
    }
    running = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      await settle(batch);
    }
    running = false;
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (queue.length === 1 && !running) {
        running = whileInFlight;
        setImmediate(() => void flush());
      }
    });
}

/**
 * Races work against a time limit: resolves with the work, or rejects with `onTimeout()` once
 * `ms` have passed. The work itself goes on (a publish may still be acknowledged late);
 * reporting that late outcome is the caller's. The one time limit of both publishers.
 */
export async function withTimeLimit<T>(
  work: Promise<T>,
  ms: number,
  onTimeout: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Group commit: the units of work handed over in one turn of the event loop run in one
 * transaction (`transaction`, the store's), and each caller gets its own unit's result once
 * that transaction committed. When the shared transaction fails, each unit runs again
 * alone, so that one failing unit fails only its own caller. A unit is database work only:
 * it may run twice (rolled back the first time).
 */
export function groupCommit(
  transaction: <T>(work: () => T) => T,
): <T>(work: () => T) => Promise<T> {
  const batched = batchPerTurn((units: (() => unknown)[]) =>
    transaction(() => units.map((unit) => unit())),
  );
  // Each unit runs in its caller's context (its request's trace), not in that of the
  // caller whose unit happened to start the turn's batch. The trace is the only context
  // the services keep (OpenTelemetry's, in AsyncLocalStorage), so that is what is carried:
  // AsyncResource.bind carried everything but cost 3 % of the orders API's CPU under load
  // (a new async resource, its init hooks and two deprecation wrappers per unit).
  return <T>(work: () => T) => {
    const within = inCallersContext();
    return batched(() => within(work)) as Promise<T>;
  };
}

/**
 * The trace context of now, to run work in later: a batch runs each item's own work (a
 * unit of a group commit, an order's outbox row) within the context of the request that
 * handed it over, not within that of whichever request started the batch.
 */
export function inCallersContext(): <T>(work: () => T) => T {
  const caller = context.active();
  return (work) => context.with(caller, work);
}

/**
 * `load` shared for `ms`: callers within that time get the same promise (a failed one is
 * forgotten at once, so the next caller tries again). Many browsers polling a panel every
 * 2 s then cost the broker one round of requests per `ms`.
 */
export function cachedFor<T>(ms: number, load: () => Promise<T>): () => Promise<T> {
  let cached: { at: number; value: Promise<T> } | null = null;
  return () => {
    if (cached && Date.now() - cached.at < ms) return cached.value;
    const value = load();
    value.catch(() => {
      cached = null;
    });
    cached = { at: Date.now(), value };
    return value;
  };
}
