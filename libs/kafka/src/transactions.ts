import { type Logger, metrics } from "@shop/service";
import { type Admin, type Kafka, Partitioners, type Producer, type Transaction } from "kafkajs";
import { type OutgoingRecord, traced } from "./publisher.ts";

/**
 * Exactly-once for a consume→produce step (Kafka transactions): what a consumer publishes
 * while handling the records of one input partition, and the offset after them, are
 * committed together in one transaction, or not at all. A crash before the commit aborts
 * the transaction: its records are never seen by a `read_committed` reader (kafkajs's
 * default) and its input records are read again and handled again, once in effect.
 *
 * One transactional producer per input partition (`<transactionalId>-<topic>-<partition>`):
 * whoever owns the partition next starts a producer with the same id, which fences the
 * previous owner's (a zombie's commit then fails). kafkajs has no KIP-447, so the id per
 * partition, not the group generation, is what fences.
 */
export interface PartitionTransactions {
  /** The open transaction's sender for one input partition (one is opened if none is). */
  forPartition(topic: string, partition: number): PartitionTransaction;
  /**
   * The member joined its group holding `assignment`: the producers of the partitions it no
   * longer holds are dropped. The next owner's producer fenced them; kept, one would fail
   * every write with "an old epoch" once its partition came back (issue 55).
   */
  assigned(assignment: Record<string, number[]>): Promise<void>;
  close(): Promise<void>;
}

export interface PartitionTransaction {
  /** Writes records in the open transaction; resolves once written (not yet visible). */
  send(records: OutgoingRecord[]): Promise<void>;
  /**
   * Commits the transaction with the group's offset `next` (the next record to read); one
   * is opened for the offset alone if nothing was sent.
   */
  commit(next: string): Promise<void>;
  /** Aborts the open transaction, if any: what it wrote is never read as committed. */
  abort(): Promise<void>;
}

/** A transactional producer, connected: one per input partition. */
function transactionalProducer(kafka: Kafka, id: string, timeoutMs = 15_000): Promise<Producer> {
  const producer = kafka.producer({
    transactionalId: id,
    idempotent: true,
    maxInFlightRequests: 1,
    // An instance killed mid-transaction holds back read_committed readers of what it
    // wrote (the last stable offset) until the next owner fences it or this runs out.
    transactionTimeout: timeoutMs,
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  return producer.connect().then(() => producer);
}

/**
 * Writes records in an open transaction. Each record has its producer span in the caller's
 * trace, as with the publisher's (the span ends when the send is written; the transaction
 * commits later).
 */
async function writeRecords(tx: Transaction, records: OutgoingRecord[]): Promise<void> {
  const spans = traced(records);
  for (const r of records) metrics.published.inc({ destino: r.topic });
  try {
    await tx.sendBatch({
      acks: -1,
      topicMessages: [...new Set(records.map((r) => r.topic))].map((t) => ({
        topic: t,
        messages: spans.sent
          .filter((r) => r.topic === t)
          .map((r) => ({ key: r.key, value: r.value, headers: r.headers })),
      })),
    });
  } catch (error) {
    spans.failed(error);
    throw error;
  }
  spans.ended();
  for (const r of records) metrics.confirmed.inc({ destino: r.topic });
}

/** One transactional producer per id, made on first use; a failed one is dropped and made anew. */
function producerPool(kafka: Kafka, timeoutMs?: number) {
  const producers = new Map<string, Promise<Producer>>();
  return {
    get(id: string): Promise<Producer> {
      let p = producers.get(id);
      if (!p) {
        p = transactionalProducer(kafka, id, timeoutMs);
        p.catch(() => producers.delete(id));
        producers.set(id, p);
      }
      return p;
    },
    /** A producer whose transaction failed may be fenced: it is dropped. */
    async drop(id: string): Promise<void> {
      const p = producers.get(id);
      producers.delete(id);
      await p?.then((producer) => producer.disconnect()).catch(() => {});
    },
    ids: () => [...producers.keys()],
  };
}
type ProducerPool = ReturnType<typeof producerPool>;

/**
 * Waits until the group's committed offset of one partition reads `next`, as a member
 * joining the group would read it. A transaction's offset is committed when its marker
 * reaches __consumer_offsets, after EndTxn has answered; kafkajs reads offsets without
 * require_stable (KIP-447), so a rebalance right after a commit (this member's own rejoin)
 * could read the offset before it and decide the same records again. Waiting here, the batch
 * ends, and the member rejoins, only once the offset reads as committed. Bounded: past
 * `timeoutMs` the batch ends anyway, with a warning (at-least-once, as without the wait).
 */
async function untilStable(
  admin: () => Promise<Admin>,
  at: { groupId: string; topic: string; partition: number; next: string; log: Logger },
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    const [t] = await (await admin()).fetchOffsets({ groupId: at.groupId, topics: [at.topic] });
    const committed = t?.partitions.find((p) => p.partition === at.partition)?.offset ?? "-1";
    if (BigInt(committed) >= BigInt(at.next)) return;
    if (Date.now() + wait > deadline) {
      const { log, ...where } = at;
      log.warn("a transaction's offset not yet readable as committed; going on", {
        ...where,
        committed,
      });
      return;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

export function partitionTransactions(
  kafka: Kafka,
  opts: { transactionalId: string; groupId: string; log: Logger; timeoutMs?: number },
): PartitionTransactions {
  const pool = producerPool(kafka, opts.timeoutMs);
  let admin: Promise<Admin> | null = null;
  const connected = () => {
    if (!admin) {
      const a = kafka.admin();
      admin = a.connect().then(() => a);
      admin.catch(() => {
        admin = null;
      });
    }
    return admin;
  };
  const idOf = (topic: string, partition: number) =>
    `${opts.transactionalId}-${topic}-${partition}`;
  return {
    forPartition: (topic, partition) =>
      partitionTransaction(pool, idOf(topic, partition), {
        ...opts,
        topic,
        partition,
        stable: (next) =>
          untilStable(connected, { groupId: opts.groupId, topic, partition, next, log: opts.log }),
      }),
    async assigned(assignment) {
      const held = new Set(
        Object.entries(assignment).flatMap(([topic, ps]) => ps.map((p) => idOf(topic, p))),
      );
      await Promise.all(
        pool
          .ids()
          .filter((id) => !held.has(id))
          .map(pool.drop),
      );
    },
    async close() {
      await Promise.all(pool.ids().map(pool.drop));
      const a = admin;
      admin = null;
      await a?.then((x) => x.disconnect()).catch(() => {});
    },
  };
}

/** A partition's transactions, one at a time, through the pool's producer for `id`. */
function partitionTransaction(
  pool: ProducerPool,
  id: string,
  opts: {
    groupId: string;
    log: Logger;
    topic: string;
    partition: number;
    stable: (next: string) => Promise<void>;
  },
): ReturnType<PartitionTransactions["forPartition"]> {
  const { topic, partition } = opts;
  let open: Promise<Transaction> | null = null;
  const transaction = () => {
    open ??= pool.get(id).then((p) => p.transaction());
    return open;
  };
  return {
    send: async (records) => writeRecords(await transaction(), records),
    async commit(next) {
      const tx = await transaction();
      try {
        await tx.sendOffsets({
          consumerGroupId: opts.groupId,
          topics: [{ topic, partitions: [{ partition, offset: next }] }],
        });
        await tx.commit();
      } catch (error) {
        opts.log.warn("transaction not committed; it is aborted", {
          transactionalId: id,
          error: (error as Error).message,
        });
        await tx.abort().catch(() => {});
        await pool.drop(id);
        throw error;
      } finally {
        open = null;
      }
      // Committed: ends once a rejoining member would read the offset (untilStable).
      await opts.stable(next).catch((error: Error) =>
        opts.log.warn("could not read a committed transaction's offset back", {
          error: error.message,
        }),
      );
    },
    async abort() {
      if (!open) return;
      const tx = await open.catch(() => null);
      open = null;
      if (tx?.isActive()) await tx.abort().catch(() => {});
      await pool.drop(id);
    },
  };
}
