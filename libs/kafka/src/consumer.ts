import type { MessageContract, StuckPartition } from "@shop/contracts";
import { dlqTopic } from "@shop/contracts";
import {
  ConsumerEvents,
  inConsumerSpan,
  kafkaRequests,
  type Logger,
  MESSAGING,
  metrics,
} from "@shop/service";
import type { Consumer, ConsumerConfig, Kafka, KafkaMessage } from "kafkajs";
import { withRetries } from "./client.ts";
import { countStuck, measureLag } from "./lag.ts";
import type { OutgoingRecord, Publisher } from "./publisher.ts";
import { type PartitionTransaction, partitionTransactions } from "./transactions.ts";

export interface RecordMeta {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  /** The platform's write time of the record, ISO 8601. */
  timestamp: string;
  /**
   * With `transactional`: writes records in the input partition's open transaction, to be
   * committed with the offset after this record (resolves once written, not yet visible).
   */
  send?: (records: OutgoingRecord[]) => Promise<void>;
}

export interface Partitions {
  [topic: string]: number[];
}

export interface ConsumerStatus {
  connected: boolean;
  group: string;
  partitions: Partitions;
  /** Partitions stuck on a record right now, with the record, attempts and last error. */
  stuck: StuckPartition[];
}

/** Pause before the next attempt at a record that failed n times: 250 ms doubling, to 30 s. */
export function retryDelay(n: number): number {
  return Math.min(250 * 2 ** (n - 1), 30_000);
}

export interface ConsumerOptions<T> {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  contract: MessageContract<T>;
  /** The key the record must carry for this value (the pedidoId as text). */
  keyOf: (value: T) => string;
  /**
   * The business handler: it returns once the effect is durable, or throws. A pipelined
   * handler may instead return the promise of its last step (a publish): it is called
   * record after record, in order, without waiting for that step, and the record's offset
   * is resolved only once that step and every earlier one in the partition succeeded.
   */
  handle: (value: T, meta: RecordMeta) => Promise<void | { pending: Promise<void> }>;
  /** Where records that fail the contract go: `<topic>.dlq`, with the reason in headers. */
  deadLetters: Publisher;
  log: Logger;
  consumer?: Partial<ConsumerConfig>;
  /** kafkajs autoCommit settings; offsets are only ever resolved after handle returns. */
  autoCommitInterval?: number;
  /**
   * Exactly-once for consume→produce (transactions.ts): what the handler writes through
   * `meta.send` and the offsets are committed in one Kafka transaction per input partition,
   * at the end of each batch and every `autoCommitInterval` during a long one. Without it,
   * at-least-once: offsets are committed after the handler's effects, and a crash between
   * the two repeats them.
   */
  transactional?: { transactionalId: string; timeoutMs?: number };
  /**
   * How many of its partitions this consumer handles at once, one batch each (1 by
   * default: one record at a time, in the order kafkajs fetched them). Order within a
   * partition is kept whatever the number.
   */
  partitionsAtOnce?: number;
}

export interface RunningConsumer {
  status(): ConsumerStatus;
  /** received, handled, retried, dead-lettered, acked (offset resolved), committed. */
  events: ConsumerEvents;
  stop(): Promise<void>;
}

/** Headers of a dead letter. A record redriven from the dead letters carries its count. */
function dlqHeaders(meta: RecordMeta, reason: string, message: KafkaMessage) {
  const before = Number(message.headers?.["dlq-tentativas"]?.toString() ?? 0);
  return {
    "dlq-motivo": reason,
    "dlq-tentativas": String(before + 1),
    "dlq-topico-original": meta.topic,
    "dlq-particao-original": String(meta.partition),
    "dlq-offset-original": meta.offset,
    "dlq-em": new Date().toISOString(),
  };
}

/**
 * The consumer wrapper of the event-log services (the orders API's results consumer and
 * payments; the analytics and dead-letter CLIs read with kafkajs directly, from offset 0,
 * with nothing to dead-letter). It owns decode, validation, dead-lettering
 * and commit; the handler only sees valid values. A record that fails the contract never
 * blocks its partition and is never lost: it is copied to `<topic>.dlq` (confirmed) before
 * the consumer moves on. A handler error is not a bad record and is not swallowed: the
 * record is tried again, with a growing pause (retryDelay), for as long as it
 * fails; meanwhile its partition is reported stuck (status().presas, the metric
 * shop_consumer_stuck_partitions) with the record, the attempts and the last error. The
 * same goes for a dead letter that cannot be published (its topic deleted, say).
 */
export async function startConsumer<T>(options: ConsumerOptions<T>): Promise<RunningConsumer> {
  const { kafka, groupId, topics, contract, keyOf, handle, deadLetters, log } = options;
  const state: Omit<ConsumerStatus, "stuck"> = { connected: false, group: groupId, partitions: {} };
  const stuck = new Map<string, StuckPartition>();
  const eventos = new ConsumerEvents();
  const messageOf = (topic: string, partition: number, m: KafkaMessage) => ({
    source: topic,
    where: `${topic}[${partition}]@${m.offset}`,
    key: m.key?.toString("utf8") ?? null,
  });
  let stopping = false;
  const transactions = options.transactional
    ? partitionTransactions(kafka, { ...options.transactional, groupId, log })
    : null;

  // Returns the pipelined step wrapped in an object: awaiting a promise of a promise would
  // wait for both.
  function onRecord(
    topic: string,
    partition: number,
    message: KafkaMessage,
    tx: PartitionTransaction | null,
  ): Promise<{ pending?: Promise<void> }> {
    // The record continues the trace of whoever published it (traceparent header), in a
    // consumer span of its own that ends once its pipelined step has settled.
    return inConsumerSpan(
      `process ${topic}`,
      message.headers,
      {
        [MESSAGING.system]: "kafka",
        [MESSAGING.destination]: topic,
        [MESSAGING.operationType]: "process",
        [MESSAGING.operationName]: "process",
        [MESSAGING.consumerGroup]: groupId,
        [MESSAGING.partition]: String(partition),
        [MESSAGING.kafkaOffset]: message.offset,
        ...(message.key ? { [MESSAGING.kafkaKey]: message.key.toString("utf8") } : {}),
      },
      () => handleRecord(topic, partition, message, tx),
    );
  }

  async function handleRecord(
    topic: string,
    partition: number,
    message: KafkaMessage,
    tx: PartitionTransaction | null,
  ): Promise<{ pending?: Promise<void> }> {
    const meta: RecordMeta = {
      topic,
      partition,
      offset: message.offset,
      key: message.key?.toString("utf8") ?? null,
      timestamp: new Date(Number(message.timestamp)).toISOString(),
      ...(tx ? { send: (records: OutgoingRecord[]) => tx.send(records) } : {}),
    };
    eventos.emit("received", messageOf(topic, partition, message));
    const decoded = contract.decode(message.value);
    let reason: string | null = null;
    if (!decoded.ok) reason = decoded.error.reason;
    else if (meta.key !== keyOf(decoded.value)) {
      reason = `${contract.name}: key ${JSON.stringify(meta.key)} does not match ${JSON.stringify(keyOf(decoded.value))}`;
    }
    if (reason !== null || !decoded.ok) {
      metrics.deadLettered.inc({ destino: topic });
      const dlq = dlqTopic(topic);
      log.warn("invalid record sent to the dead-letter topic", {
        topic,
        partition,
        offset: meta.offset,
        dlq,
        reason,
        evento: "dead-lettered",
      });
      // The record as it was, byte for byte (key, value and headers), with why beside it.
      await deadLetters.publishBatch([
        {
          topic: dlq,
          key: message.key ?? null,
          value: message.value ?? Buffer.alloc(0),
          headers: { ...message.headers, ...dlqHeaders(meta, reason ?? "", message) },
        },
      ]);
      eventos.emit("dead-lettered", {
        ...messageOf(topic, partition, message),
        reason: reason ?? "",
      });
      return {};
    }
    let r: void | { pending: Promise<void> };
    try {
      r = await handle(decoded.value, meta);
    } catch (error) {
      metrics.failed.inc({ destino: topic });
      throw error;
    }
    if (!r) {
      metrics.consumed.inc({ destino: topic });
      eventos.emit("handled", messageOf(topic, partition, message));
      return {};
    }
    r.pending.then(
      () => {
        metrics.consumed.inc({ destino: topic });
        eventos.emit("handled", messageOf(topic, partition, message));
      },
      () => metrics.failed.inc({ destino: topic }),
    );
    return { pending: r.pending };
  }

  /** One kafkajs consumer, connected, subscribed and running. */
  async function start(): Promise<Consumer> {
    const consumer: Consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      rebalanceTimeout: 30_000,
      maxWaitTimeInMs: 1_000,
      // kafkajs retries a failed fetch or commit on this schedule, and restarts the consumer
      // on it after a crash. Its default grows to 30 s between tries, which left a consumer
      // idle for over a minute after repeated outages; at most 1 s between tries, a node's
      // death is noticed within a second of the cluster moving its work (a fence after
      // 2.5 s), inside the spec's 5 s. 15 tries span about 13 s before a crash and restart.
      retry: { initialRetryTime: 300, maxRetryTime: 1_000, retries: 15 },
      ...options.consumer,
    });
    consumer.on(consumer.events.REQUEST, ({ payload }) =>
      kafkaRequests.inc({ api: payload.apiName }),
    );
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      state.connected = true;
      state.partitions = Object.fromEntries(
        Object.entries(payload.memberAssignment).map(([t, ps]) => [
          t,
          [...ps].sort((a, b) => a - b),
        ]),
      );
      const held = Object.entries(state.partitions)
        .map(([t, ps]) => `${t}[${ps.join(",")}]`)
        .join(" ");
      log.info(`rebalance: group ${groupId} assigned ${held || "no partitions (idle member)"}`);
    });
    consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
      for (const t of payload.topics)
        for (const p of t.partitions)
          eventos.emit("committed", {
            source: t.topic,
            partition: Number(p.partition),
            offset: p.offset,
          });
    });
    consumer.on(consumer.events.CONNECT, () => {
      state.connected = true;
    });
    for (const event of [consumer.events.DISCONNECT, consumer.events.STOP]) {
      consumer.on(event, () => {
        state.connected = false;
        state.partitions = {};
      });
    }
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      state.connected = false;
      log.error("consumer crashed", { error: payload.error.message, restart: payload.restart });
      // kafkajs restarts by itself only after a retriable error. After any other crash (seen
      // after repeated broker outages) this service would stay out of its group for good:
      // a fresh consumer takes its place instead.
      if (!payload.restart && !stopping) setTimeout(() => void replace(consumer), 1_000);
    });

    await consumer.connect();
    // Right after its topics were created, a broker of a cluster (one just restarted, say)
    // may not know them yet: UNKNOWN_TOPIC_OR_PARTITION is retried, not a failed start.
    await withRetries(() => consumer.subscribe({ topics, fromBeginning: true }));
    await consumer.run({
      // With transactions the offsets are committed in them, never by kafkajs.
      autoCommit: !transactions,
      partitionsConsumedConcurrently: options.partitionsAtOnce ?? 1,
      ...(options.autoCommitInterval && !transactions
        ? { autoCommitInterval: options.autoCommitInterval }
        : {}),
      eachBatchAutoResolve: false,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
      }) => {
        // In order: an offset is resolved only when its record and every earlier one are done.
        const inFlight: { offset: string; pending: Promise<void> | undefined; done: boolean }[] =
          [];
        const acked = (offset: string) =>
          eventos.emit("acked", {
            source: batch.topic,
            where: `${batch.topic}[${batch.partition}]@${offset}`,
            key: null,
          });
        // With transactions, offsets done wait here for the transaction that commits them.
        const tx = transactions?.forPartition(batch.topic, batch.partition) ?? null;
        const uncommitted: string[] = [];
        let lastCommit = Date.now();
        const resolve = (offset: string) => {
          if (tx) {
            uncommitted.push(offset);
            return;
          }
          resolveOffset(offset);
          acked(offset);
        };
        const resolveDone = () => {
          while (inFlight[0]?.done) resolve((inFlight.shift() as { offset: string }).offset);
        };
        /** Every record handed over done, then its writes and offset committed in one go. */
        const commitTransaction = async (t: PartitionTransaction) => {
          for (const p of inFlight.splice(0)) {
            await p.pending;
            resolve(p.offset);
          }
          const last = uncommitted.at(-1);
          if (last === undefined) return;
          const next = String(Number(last) + 1);
          await t.commit(next);
          resolveOffset(last);
          for (const offset of uncommitted.splice(0)) acked(offset);
          lastCommit = Date.now();
          eventos.emit("committed", {
            source: batch.topic,
            partition: batch.partition,
            offset: next,
          });
        };
        /** The record handled, tried again with backoff while it fails; null if the partition went away. */
        const handleUntilDone = async (message: KafkaMessage) => {
          const chave = `${batch.topic}:${batch.partition}`;
          for (let attempt = 1; ; attempt++) {
            try {
              const r = await onRecord(batch.topic, batch.partition, message, tx);
              stuck.delete(chave);
              return r;
            } catch (error) {
              // A failed write may have broken the transaction: it is aborted, and kafkajs
              // reads the batch again from the last committed offset.
              if (tx) throw error;
              const previous = stuck.get(chave);
              const stuckPartition: StuckPartition = {
                topic: batch.topic,
                partition: batch.partition,
                offset: message.offset,
                tentativas: attempt,
                ultimoErro: error instanceof Error ? error.message : String(error),
                desde:
                  previous?.offset === message.offset ? previous.desde : new Date().toISOString(),
              };
              stuck.set(chave, stuckPartition);
              metrics.retried.inc({ destino: batch.topic });
              eventos.emit("retried", {
                ...messageOf(batch.topic, batch.partition, message),
                attempt: attempt,
                error: stuckPartition.ultimoErro,
              });
              const delay = retryDelay(attempt);
              log.warn("record failed; its partition waits and tries it again", {
                topic: batch.topic,
                partition: batch.partition,
                offset: message.offset,
                attempt: attempt,
                nextInMs: delay,
                error: stuckPartition.ultimoErro,
                evento: "retried",
              });
              // Wait in slices, heartbeating, so that the group keeps this member.
              for (let expected = 0; expected < delay; expected += 500) {
                if (!isRunning() || isStale()) {
                  stuck.delete(chave);
                  return null;
                }
                await new Promise((r) => setTimeout(r, Math.min(500, delay - expected)));
                await heartbeat().catch(() => {});
              }
            }
          }
        };
        try {
          for (const message of batch.messages) {
            if (!isRunning() || isStale()) break;
            const done = await handleUntilDone(message);
            if (done === null) break;
            const { pending } = done;
            const p = { offset: message.offset, pending, done: pending === undefined };
            pending?.then(
              () => {
                p.done = true;
              },
              () => {}, // awaited below, in order
            );
            inFlight.push(p);
            resolveDone();
            // kafkajs commits an eachBatch consumer's offsets only when the batch ends; with
            // autoCommitInterval, what is done is also committed during a long batch
            // (payments' 3 s per record: the spec's "every 5 seconds"). A transaction too.
            const interval = options.autoCommitInterval;
            if (!tx) await commitOffsetsIfNecessary();
            else if (interval && Date.now() - lastCommit >= interval) await commitTransaction(tx);
            await heartbeat();
          }
          // A stale batch (its partition revoked) is the rebalance case of the catch below:
          // aborted, never committed, for the same reason.
          if (tx && isStale()) await tx.abort();
          else if (tx) await commitTransaction(tx);
          for (const p of inFlight) {
            await p.pending;
            resolve(p.offset);
          }
        } catch (error) {
          // Never a commit here, not even of finished work at a rebalance: kafkajs reads
          // offsets without require_stable (KIP-447), so a member could read its partition's
          // offset before this commit is written and decide the same records again.
          await tx?.abort();
          throw error;
        }
      },
    });
    return consumer;
  }

  async function replace(crashed: Consumer): Promise<void> {
    if (stopping || crashed !== current) return;
    await crashed.disconnect().catch(() => {});
    try {
      current = await start();
      log.info("consumer replaced after a crash", { grupo: groupId });
    } catch (error) {
      log.error("consumer could not be replaced yet; trying again", {
        error: (error as Error).message,
      });
      setTimeout(() => void replace(crashed), 2_000);
    }
  }

  let current = await start();
  const stopMeasuring = measureLag(kafka, groupId, topics);
  const stopCounting = countStuck(groupId, () => stuck.size);

  return {
    events: eventos,
    status: () => ({
      ...state,
      partitions: { ...state.partitions },
      stuck: [...stuck.values()].map((p) => ({ ...p })),
    }),
    async stop() {
      stopping = true;
      stopMeasuring();
      stopCounting();
      await current.disconnect();
      await transactions?.close();
    },
  };
}
