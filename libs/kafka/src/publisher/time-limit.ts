import { type Logger, metrics, withTimeLimit } from "@shop/service";
import { refusedForGood } from "../client.ts";
import type { OutgoingRecord } from "./record.ts";

/** The broker did not acknowledge the record in time, or could not be reached. */
export class PublishNotConfirmed extends Error {
  constructor(
    readonly topic: string,
    readonly key: string,
    cause: unknown,
    readonly timedOut: boolean,
  ) {
    super(
      timedOut
        ? `no acknowledgement from Kafka for ${topic} (key ${key}) in time`
        : `Kafka refused or could not take ${topic} (key ${key}): ${cause instanceof Error ? cause.message : cause}`,
      { cause },
    );
  }
}

/** How many of a send's records go to each topic: what the metrics count by. */
export function countPerTopic(records: OutgoingRecord[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of records) m.set(r.topic, (m.get(r.topic) ?? 0) + 1);
  return m;
}

/** Counts a send in the metrics: handed over, then confirmed or failed. */
export async function counted<T>(
  countsPerTopic: Map<string, number>,
  send: () => Promise<T>,
): Promise<T> {
  for (const [d, n] of countsPerTopic) metrics.published.inc({ destino: d }, n);
  try {
    const r = await send();
    for (const [d, n] of countsPerTopic) metrics.confirmed.inc({ destino: d }, n);
    return r;
  } catch (error) {
    for (const [d, n] of countsPerTopic) metrics.failed.inc({ destino: d }, n);
    throw error;
  }
}

export interface TimeLimit {
  timeoutMs: number;
  connect: () => Promise<void>;
  /** PublisherOptions.tryUntilLimit: a send kafkajs gave up on is tried again until the limit. */
  tryUntilLimit?: boolean;
  log?: Logger;
}

/**
 * Runs a send within the time limit. kafkajs keeps retrying a send in the background after
 * the limit: a record reported as not confirmed may still be written later. What became of
 * it is logged and counted (shop_messages_late_written_total,
 * shop_messages_abandoned_total): until one of them moves, it may still be written. The
 * outbox and the idempotent consumers make that harmless.
 */
export async function withinTimeLimit<T>(
  limit: TimeLimit,
  what: { topic: string; key: string; countsPerTopic: Map<string, number> },
  send: () => Promise<T>,
): Promise<T> {
  let timedOut = false;
  const sending = (async () => {
    for (;;) {
      try {
        await limit.connect();
        return await send();
      } catch (error) {
        if (!limit.tryUntilLimit || timedOut || refusedForGood(error)) throw error;
        await new Promise((r) => setTimeout(r, 200));
        if (timedOut) throw error;
      }
    }
  })();
  sending.then(
    () => timedOut && lateOutcome(limit.log, what, null),
    (error: unknown) => timedOut && lateOutcome(limit.log, what, error),
  );
  try {
    return await withTimeLimit(sending, limit.timeoutMs, () => {
      timedOut = true;
      return new PublishNotConfirmed(what.topic, what.key, null, true);
    });
  } catch (error) {
    if (error instanceof PublishNotConfirmed) throw error;
    throw new PublishNotConfirmed(what.topic, what.key, error, false);
  }
}

/** A record reported as not confirmed was written after all (error null), or given up on. */
function lateOutcome(
  log: Logger | undefined,
  {
    topic,
    key,
    countsPerTopic,
  }: { topic: string; key: string; countsPerTopic: Map<string, number> },
  error: unknown,
): void {
  const counter = error === null ? metrics.lateWritten : metrics.abandoned;
  for (const [d, n] of countsPerTopic) counter.inc({ destino: d }, n);
  if (error === null)
    log?.warn(
      "Kafka acknowledged, after the time limit, a record already reported as not confirmed",
      {
        topic,
        key,
      },
    );
  else
    log?.warn("kafkajs gave up on a record reported as not confirmed: it was not written", {
      topic,
      key,
      error: String(error),
    });
}
