import type { ConsumerEvents } from "@shop/service";
import type { EachBatchPayload } from "kafkajs";
import type { PartitionTransactions } from "../transactions.ts";
import { BatchOffsets } from "./offsets.ts";
import type { Generation, RebalanceNotice } from "./rebalance.ts";
import type { recordHandler } from "./record.ts";
import type { StuckPartitions } from "./stuck.ts";
import { HEARTBEAT_MS } from "./timings.ts";
import type { Turns } from "./turns.ts";

export interface BatchLoop {
  onRecord: ReturnType<typeof recordHandler>;
  stuck: StuckPartitions;
  events: ConsumerEvents;
  transactions: PartitionTransactions | null;
  /** The member's turns at the handler, the oldest record first (consumer/turns.ts). */
  turns: Turns;
  /** What any of the member's batches heard of a rebalance (consumer/rebalance.ts). */
  rebalance: RebalanceNotice;
  /** kafkajs's autoCommitInterval, which also paces a long batch's transactions. */
  autoCommitInterval?: number;
}

/** kafkajs's answers to a heartbeat that mean "rejoin": the member's partitions may move. */
const REJOIN = new Set([
  "REBALANCE_IN_PROGRESS",
  "UNKNOWN_MEMBER_ID",
  "ILLEGAL_GENERATION",
  "FENCED_INSTANCE_ID",
]);

/** A heartbeat's error that means "rejoin" is told to the member's batches of its generation. */
function heardRejoin(error: { type?: string }, rebalance: Pick<Generation, "heard">): void {
  if (REJOIN.has(error?.type ?? "")) rebalance.heard(error);
}

/**
 * `work` with the member's heartbeat going on beside it, every HEARTBEAT_MS. kafkajs
 * heartbeats only when eachBatch calls it, between records; payments' record takes 3 s, so
 * the group heard from a busy member every 3 s and learned of a rebalance (a member gone,
 * one joining) only after the record. Beside the record, the session never comes near its
 * end, and a rebalance is known within a second: the member's batches of this generation
 * are told then (`rebalance`), with the heartbeat's error, so that a handler that has done
 * nothing durable yet (payments, still waiting to decide) lets the record go instead of
 * finishing it while the whole group waits for this member (RecordMeta.signal,
 * consumer/record.ts). Any other error of that heartbeat is left to the heartbeat after
 * the record.
 */
export async function beatingWhile<R>(
  heartbeat: () => Promise<void>,
  rebalance: Pick<Generation, "heard">,
  work: () => Promise<R>,
  everyMs = HEARTBEAT_MS,
): Promise<R> {
  const beating = setInterval(
    () => void heartbeat().catch((error: { type?: string }) => heardRejoin(error, rebalance)),
    everyMs,
  );
  try {
    return await work();
  } finally {
    clearInterval(beating);
  }
}

/**
 * kafkajs's eachBatch: the batch's records one after the other, each in its turn among the
 * member's partitions (the oldest record first, consumer/turns.ts) and handled until done
 * (the stuck-partition policy), their offsets resolved in order, committed during a long
 * batch and at its end. Once any of the member's batches has heard of a rebalance
 * (consumer/rebalance.ts), the record in hand is let go if its handler allows, no batch
 * starts another, and each record handed over is waited for (its result's acknowledgement:
 * milliseconds on a live broker, at most the publisher's timeout) before the batch ends.
 * kafkajs commits what is resolved when a batch ends in an error, before the member
 * rejoins, and the group cannot hand the partition on before that: a result acknowledged
 * after the batch's end stayed uncommitted and was decided again by the partition's next
 * owner. A transaction is aborted instead, never committed after an error: kafkajs reads
 * offsets without require_stable (KIP-447), so a member could read its partition's offset
 * before the transaction's commit is written.
 */
export function eachBatchOf(loop: BatchLoop) {
  return async (payload: EachBatchPayload): Promise<void> => {
    const { batch, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    // This generation's notice, shared by the member's batches.
    const generation = loop.rebalance.current();
    const { signal } = generation;
    const tx = loop.transactions?.forPartition(batch.topic, batch.partition) ?? null;
    const offsets = new BatchOffsets(batch.topic, batch.partition, payload, tx, loop.events);
    let holding = false;
    const handOver = () => {
      if (holding) loop.turns.release();
      holding = false;
    };
    try {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        if (signal.aborted) throw signal.reason;
        const writtenAt = Number(message.timestamp);
        // Before its partition waits for older records of others, a transaction commits
        // what it holds: it would stay open through their handling.
        if (tx && holding && loop.turns.olderWaiting(writtenAt))
          await offsets.commitTransaction(tx);
        const done = await beatingWhile(heartbeat, generation, async () => {
          // This record's turn is asked for before the one held is given back, so that it
          // is among the records compared.
          const turn = loop.turns.take(writtenAt, signal);
          handOver();
          await turn;
          holding = true;
          return loop.stuck.untilDone(
            batch.topic,
            batch.partition,
            message,
            payload,
            () => loop.onRecord(batch.topic, batch.partition, message, tx, signal),
            tx !== null,
            signal,
          );
        });
        // Let go at a rebalance: its error ends the batch as the heartbeat's would have
        // (a transaction aborted), and kafkajs rejoins the group.
        if (done === null && signal.aborted) throw signal.reason;
        if (done === null) break;
        offsets.add(message.offset, done.pending);
        // kafkajs commits an eachBatch consumer's offsets only when the batch ends; with
        // autoCommitInterval, what is done is also committed during a long batch
        // (payments' 3 s per record: the spec's "every 5 seconds"). A transaction too.
        if (!tx) await commitOffsetsIfNecessary();
        else if (offsets.due(loop.autoCommitInterval)) await offsets.commitTransaction(tx);
        await heartbeat().catch((error: { type?: string }) => {
          heardRejoin(error, generation);
          throw error;
        });
      }
      handOver();
      // A stale batch (its partition revoked) is the rebalance case of the catch below:
      // aborted, never committed, for the same reason.
      if (tx && isStale()) await tx.abort();
      else if (tx) await offsets.commitTransaction(tx);
      await offsets.settle();
    } catch (error) {
      handOver();
      if (!tx && (error as { type?: string })?.type === "REBALANCE_IN_PROGRESS")
        await offsets.settle().catch(() => {}); // a failed step is the next owner's work
      offsets.close();
      await tx?.abort();
      throw error;
    }
  };
}
