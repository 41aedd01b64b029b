import type { StuckPartition } from "@shop/contracts";
import { type ConsumerEvents, type Logger, metrics } from "@shop/service";
import type { KafkaMessage } from "kafkajs";
import { recordName } from "./record.ts";

/**
 * The stuck-partition policy. A handler error is not a bad record and is not swallowed:
 * the record is tried again, with a growing pause (retryDelay), for as long as it fails;
 * meanwhile its partition is reported stuck (status().stuck, the metric
 * shop_consumer_stuck_partitions) with the record, the attempts and the last error.
 */

/** Pause before the next attempt at a record that failed n times: 250 ms doubling, to 30 s. */
export function retryDelay(n: number): number {
  return Math.min(250 * 2 ** (n - 1), 30_000);
}

/** What a batch lends the policy while it waits: kafkajs's liveness checks and heartbeat. */
export interface BatchLiveness {
  isRunning(): boolean;
  isStale(): boolean;
  heartbeat(): Promise<void>;
}

export class StuckPartitions {
  private readonly stuck = new Map<string, StuckPartition>();

  constructor(
    private readonly events: ConsumerEvents,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.stuck.size;
  }

  list(): StuckPartition[] {
    return [...this.stuck.values()].map((p) => ({ ...p }));
  }

  /**
   * `attempt` until it succeeds, waiting retryDelay between tries (heartbeating, so that
   * the group keeps this member); null once the partition went away (revoked, stopping).
   * With `rethrow` (a transaction, which a failed write may have broken) the first error
   * goes to the batch instead: it is aborted and read again from the last commit. An error
   * after `rebalancing` was aborted is the handler letting the record go: null too.
   */
  async untilDone<R>(
    topic: string,
    partition: number,
    message: KafkaMessage,
    batch: BatchLiveness,
    attempt: () => Promise<R>,
    rethrow: boolean,
    rebalancing?: AbortSignal,
  ): Promise<R | null> {
    const partitionKey = `${topic}:${partition}`;
    for (let n = 1; ; n++) {
      try {
        const r = await attempt();
        this.stuck.delete(partitionKey);
        return r;
      } catch (error) {
        if (rebalancing?.aborted) {
          this.stuck.delete(partitionKey);
          return null;
        }
        if (rethrow) throw error;
        const delay = retryDelay(n);
        this.report(partitionKey, topic, partition, message, n, error, delay);
        if (!(await waitBeating(batch, delay))) {
          this.stuck.delete(partitionKey);
          return null;
        }
      }
    }
  }

  private report(
    partitionKey: string,
    topic: string,
    partition: number,
    message: KafkaMessage,
    attempt: number,
    error: unknown,
    delay: number,
  ): void {
    const previous = this.stuck.get(partitionKey);
    const lastError = error instanceof Error ? error.message : String(error);
    this.stuck.set(partitionKey, {
      topic,
      partition,
      offset: message.offset,
      tentativas: attempt,
      ultimoErro: lastError,
      desde: previous?.offset === message.offset ? previous.desde : new Date().toISOString(),
    });
    metrics.retried.inc({ destino: topic });
    this.events.emit("retried", {
      ...recordName(topic, partition, message),
      attempt,
      error: lastError,
    });
    this.log.warn("record failed; its partition waits and tries it again", {
      topic,
      partition,
      offset: message.offset,
      attempt,
      nextInMs: delay,
      error: lastError,
      evento: "retried",
    });
  }
}

/** Waits `delay` in slices of 500 ms, heartbeating; false as soon as the batch is over. */
async function waitBeating(batch: BatchLiveness, delay: number): Promise<boolean> {
  for (let waited = 0; waited < delay; waited += 500) {
    if (!batch.isRunning() || batch.isStale()) return false;
    await new Promise((r) => setTimeout(r, Math.min(500, delay - waited)));
    await batch.heartbeat().catch(() => {});
  }
  return true;
}
