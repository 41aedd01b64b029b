import type { MessageContract } from "@shop/contracts";
import { dlqTopic } from "@shop/contracts";
import {
  type ConsumerEvents,
  inConsumerSpan,
  type Logger,
  MESSAGING,
  metrics,
} from "@shop/service";
import type { KafkaMessage } from "kafkajs";
import type { OutgoingRecord, Publisher } from "../publisher.ts";
import type { PartitionTransaction } from "../transactions.ts";

/**
 * One record, from its bytes to its handler: decode, check the contract and the key,
 * dead-letter what fails them, call the business handler, count the outcome.
 */

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
  /**
   * Aborted when the member hears, while this record is in hand, that its group rebalances
   * (a heartbeat of any of its batches: consumer/batch.ts, beatingWhile;
   * consumer/rebalance.ts). A handler that has done nothing durable yet may then throw, and
   * the record is left to its partition's next owner, unfinished and uncommitted, instead
   * of being finished while the whole group waits for this member to rejoin.
   */
  signal?: AbortSignal;
}

/** What a record's handling leaves behind: the pipelined step still running, if any. */
export interface RecordDone {
  pending?: Promise<void>;
}

export interface RecordHandling<T> {
  groupId: string;
  contract: MessageContract<T>;
  keyOf: (value: T) => string;
  handle: (value: T, meta: RecordMeta) => Promise<void | { pending: Promise<void> }>;
  deadLetters: Publisher;
  events: ConsumerEvents;
  log: Logger;
}

/** How events name a record: its topic, `topic[partition]@offset` and its key. */
export const recordName = (topic: string, partition: number, m: KafkaMessage) => ({
  source: topic,
  where: `${topic}[${partition}]@${m.offset}`,
  key: m.key?.toString("utf8") ?? null,
});

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
 * The handler of one record of a partition, in a consumer span that continues the trace of
 * whoever published it (traceparent header) and ends once its pipelined step has settled.
 * It returns the pipelined step wrapped in an object: awaiting a promise of a promise would
 * wait for both.
 */
export function recordHandler<T>(h: RecordHandling<T>) {
  return (
    topic: string,
    partition: number,
    message: KafkaMessage,
    tx: PartitionTransaction | null,
    signal?: AbortSignal,
  ) =>
    inConsumerSpan(
      `process ${topic}`,
      message.headers,
      {
        [MESSAGING.system]: "kafka",
        [MESSAGING.destination]: topic,
        [MESSAGING.operationType]: "process",
        [MESSAGING.operationName]: "process",
        [MESSAGING.consumerGroup]: h.groupId,
        [MESSAGING.partition]: String(partition),
        [MESSAGING.kafkaOffset]: message.offset,
        ...(message.key ? { [MESSAGING.kafkaKey]: message.key.toString("utf8") } : {}),
      },
      () => handleRecord(h, { topic, partition, message, tx, signal }),
    );
}

interface Delivery {
  topic: string;
  partition: number;
  message: KafkaMessage;
  tx: PartitionTransaction | null;
  signal?: AbortSignal | undefined;
}

async function handleRecord<T>(h: RecordHandling<T>, d: Delivery): Promise<RecordDone> {
  const { topic, partition, message, tx, signal } = d;
  const meta: RecordMeta = {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString("utf8") ?? null,
    timestamp: new Date(Number(message.timestamp)).toISOString(),
    ...(tx ? { send: (records: OutgoingRecord[]) => tx.send(records) } : {}),
    ...(signal ? { signal } : {}),
  };
  const name = recordName(topic, partition, message);
  h.events.emit("received", name);
  const decoded = h.contract.decode(message.value);
  if (!decoded.ok) return deadLetter(h, d, meta, decoded.error.reason);
  if (meta.key !== h.keyOf(decoded.value)) {
    const expected = JSON.stringify(h.keyOf(decoded.value));
    const reason = `${h.contract.name}: key ${JSON.stringify(meta.key)} does not match ${expected}`;
    return deadLetter(h, d, meta, reason);
  }
  let r: void | { pending: Promise<void> };
  try {
    r = await h.handle(decoded.value, meta);
  } catch (error) {
    // A record let go at a rebalance did not fail: its next owner handles it.
    if (!signal?.aborted) metrics.failed.inc({ destino: topic });
    throw error;
  }
  const handled = () => {
    metrics.consumed.inc({ destino: topic });
    h.events.emit("handled", name);
  };
  if (!r) {
    handled();
    return {};
  }
  r.pending.then(handled, () => metrics.failed.inc({ destino: topic }));
  return { pending: r.pending };
}

/**
 * A record that fails the contract never blocks its partition and is never lost: copied
 * as it was, byte for byte (key, value and headers), with why beside it, to `<topic>.dlq`
 * (confirmed) before the consumer moves on.
 */
async function deadLetter<T>(
  h: RecordHandling<T>,
  { topic, partition, message }: Delivery,
  meta: RecordMeta,
  reason: string,
): Promise<RecordDone> {
  metrics.deadLettered.inc({ destino: topic });
  const dlq = dlqTopic(topic);
  h.log.warn("invalid record sent to the dead-letter topic", {
    topic,
    partition,
    offset: meta.offset,
    dlq,
    reason,
    evento: "dead-lettered",
  });
  await h.deadLetters.publishBatch([
    {
      topic: dlq,
      key: message.key ?? null,
      value: message.value ?? Buffer.alloc(0),
      headers: { ...message.headers, ...dlqHeaders(meta, reason, message) },
    },
  ]);
  h.events.emit("dead-lettered", { ...recordName(topic, partition, message), reason });
  return {};
}
