import {
  batchPerTurn,
  kafkaRequests,
  type Logger,
  MESSAGING,
  type ProducerSpan,
  spansRecorded,
  startProducerSpan,
  traceHeader,
} from "@shop/service";
import type { IHeaders, Kafka, Producer } from "kafkajs";
import { Partitioners } from "kafkajs";
import { producerStateLost } from "./client.ts";
import { sendToEveryPartition } from "./publisher/every-partition.ts";
import { partitionCounts, placeRecords } from "./publisher/placement.ts";
import type { OutgoingRecord } from "./publisher/record.ts";
import { counted, countPerTopic, type TimeLimit, withinTimeLimit } from "./publisher/time-limit.ts";

export { PublishNotConfirmed } from "./publisher/time-limit.ts";

export interface PublishAck {
  topic: string;
  partition: number;
  offset: string;
}

export type { OutgoingRecord } from "./publisher/record.ts";

export interface Publisher {
  /**
   * Publishes one record (key and value as text, no type header) and resolves once every
   * in-sync replica has it (acks=all); rejects with PublishNotConfirmed after timeoutMs,
   * whatever kafkajs's own retries are still doing.
   */
  publish(topic: string, key: string, value: string, headers?: IHeaders): Promise<PublishAck>;
  /**
   * Publishes records in one produce request per broker, in order within each partition,
   * and resolves once every one is acknowledged (acks=all); same time limit. Gives each
   * record's partition and offset, in the order of `records`.
   */
  publishBatch(records: OutgoingRecord[]): Promise<PublishAck[]>;
  /**
   * Like publish, but batched as load asks (kafkajs has no linger of its own): when no
   * produce request of this path is in flight, the records of the turn go at once; while
   * one is, the records handed over meanwhile go together, in one publishBatch, when it
   * ends. Same acks and time limit; each caller learns of its own record, in order.
   */
  publishInTurn(topic: string, key: string, value: string, headers?: IHeaders): Promise<PublishAck>;
  /**
   * Connects now rather than at the first send; an idempotent producer also takes its
   * producer id now. Without it, a publisher whose first send came during an outage asked
   * for its id just after Kafka was back, when a restarted broker answers
   * "the coordinator is loading" until its controller has handed it a block of ids: the
   * outbox relay's first publish after the lab page's "Iniciar o Kafka" came 3.4 s after
   * Kafka answered on a busy machine (issue 55), against 0.1-0.5 s with the id taken before.
   */
  connect(): Promise<void>;
  close(): Promise<void>;
}

export interface PublisherOptions {
  /**
   * A send kafkajs gives up on before the time limit is tried again until the limit (not
   * one Kafka refused for good). With a client whose retries give up within seconds, the
   * answer comes at the limit and the record's fate soon after it (the spec's
   * configuration: 500 after about 5 s, and the orphan order really orphaned).
   */
  tryUntilLimit?: boolean;
  /**
   * kafkajs's idempotent producer: each batch carries the producer's id and a sequence
   * number per partition, and Kafka writes a batch sent again with the same ones only once.
   * kafkajs sends a whole produce request again when one of its partitions answers an error,
   * the others' records included: a Kafka that had just restarted wrote three PedidoCriado
   * records twice that way (the lab page's "Iniciar o Kafka", 2026-11-29). With it, the
   * repeat is recognised. A send whose producer state Kafka no longer agrees with
   * (producerStateLost) gets a new producer, and its records are sent again by the caller.
   */
  idempotent?: boolean;
}

/** No attributes: a span that is not recorded keeps none. */
const NO_ATTRIBUTES = Object.freeze({});

/**
 * One producer span per record, in the record's own trace (see OutgoingRecord). While no
 * span is recorded (spansRecorded), a span is only its traceparent: no attributes are built.
 */
export function traced<R extends OutgoingRecord>(records: R[]) {
  const recorded = spansRecorded();
  const spans = records.map((r) =>
    startProducerSpan(
      `send ${r.topic}`,
      recorded
        ? {
            [MESSAGING.system]: "kafka",
            [MESSAGING.destination]: r.topic,
            [MESSAGING.operationType]: "send",
            [MESSAGING.operationName]: "send",
            ...(r.key !== null ? { [MESSAGING.kafkaKey]: r.key.toString() } : {}),
          }
        : NO_ATTRIBUTES,
      r.parent,
    ),
  );
  const sent = records.map((r, i) =>
    r.headers?.traceparent !== undefined
      ? r
      : { ...r, headers: { ...r.headers, traceparent: (spans[i] as ProducerSpan).traceparent } },
  );
  return {
    sent,
    acked(acks: PublishAck[]) {
      if (!recorded) return;
      acks.forEach((a, i) => {
        spans[i]?.end({
          [MESSAGING.partition]: String(a.partition),
          [MESSAGING.kafkaOffset]: a.offset,
        });
      });
    },
    /** Written, with no offsets to tell (a transaction's send). */
    ended() {
      for (const span of spans) span.end();
    },
    failed(error: unknown) {
      for (const span of spans) span.end(undefined, error);
    },
  };
}

/** What the sends of one publisher share. */
interface Sender {
  producer: Producer;
  limit: TimeLimit;
  partitionsOf: (topic: string) => Promise<number>;
  log: Logger | undefined;
}

/** One record, text key and value, acks=all, within the time limit, counted and traced. */
function publishOne(s: Sender, topic: string, key: string, value: string, headers?: IHeaders) {
  const countsPerTopic = new Map([[topic, 1]]);
  const span = traced([{ topic, key, value, ...(headers ? { headers } : {}) }]);
  const ack = counted(countsPerTopic, () =>
    withinTimeLimit(s.limit, { topic, key, countsPerTopic }, async () => {
      const [meta] = await s.producer.send({
        topic,
        acks: -1,
        messages: span.sent.map((r) => ({ key, value, headers: r.headers })),
      });
      if (!meta) throw new Error("Kafka answered without record metadata");
      return { topic, partition: meta.partition, offset: meta.baseOffset ?? "" };
    }),
  );
  ack.then((a) => span.acked([a]), span.failed);
  return ack;
}

/** Records placed (their offsets known), sent until every partition answered, counted. */
async function sendBatch(s: Sender, records: OutgoingRecord[]): Promise<PublishAck[]> {
  if (records.length === 0) return [];
  const first = records[0] as OutgoingRecord;
  const countsPerTopic = countPerTopic(records);
  const what = { topic: first.topic, key: `${first.key} (+${records.length - 1})`, countsPerTopic };
  return counted(countsPerTopic, () =>
    withinTimeLimit(s.limit, what, async () => {
      const { inOrder, perTopic } = await placeRecords(records, s.partitionsOf);
      const base = await sendToEveryPartition(s.producer, perTopic, s.log);
      return inOrder.map(({ r, partition, pos }) => ({
        topic: r.topic,
        partition,
        offset: String((base.get(`${r.topic}:${partition}`) ?? 0n) + BigInt(pos)),
      }));
    }),
  );
}

/**
 * The event-log services' publisher: acks=all, a time limit on every send (time-limit.ts),
 * each record's offset known (placement.ts) and every partition's answer checked
 * (every-partition.ts), metrics and a producer span per record.
 */
export function createPublisher(
  kafka: Kafka,
  timeoutMs: number,
  log?: Logger,
  options: PublisherOptions = {},
): Publisher {
  const newProducer = () => {
    const producer: Producer = kafka.producer({
      // The Java client's murmur2 partitioner (checked by the partitioner parity test).
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      // At most 0.5 s between tries: a partition whose leader died moves in 2.5-4 s on the
      // shop's clusters (docs/decisions.md, "Failover"), and a send learns of it within half a
      // second, inside the spec's 5 s wait. Five tries span about 1.7 s; callers try again.
      // (kafkajs warns that an idempotent producer with bounded retries may write a batch
      // twice: one it gave up on may be written after all. The outbox relay, its user, sends
      // such rows again and the consumers are idempotent; createKafka logs the warning at info.)
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 },
      ...(options.idempotent ? { idempotent: true } : {}),
    });
    producer.on(producer.events.REQUEST, ({ payload }) =>
      kafkaRequests.inc({ api: payload.apiName }),
    );
    return producer;
  };
  let connecting: Promise<void> | null = null;
  const connect = () => {
    connecting ??= sender.producer.connect().catch((error: unknown) => {
      connecting = null;
      throw error;
    });
    return connecting;
  };
  /** Kafka no longer agrees with the producer's sequence numbers or id: the next send has a new one. */
  const renew = (error: unknown) => {
    if (!options.idempotent || !producerStateLost(error)) return;
    const old = sender.producer;
    sender.producer = newProducer();
    connecting = null;
    log?.warn(
      "kafka: the producer's sequence numbers were refused; a new producer id sends again",
      {
        error: error instanceof Error ? error.message : String(error),
      },
    );
    old.disconnect().catch(() => {});
  };
  const sender: Sender = {
    producer: newProducer(),
    limit: {
      timeoutMs,
      connect,
      ...(options.tryUntilLimit ? { tryUntilLimit: true } : {}),
      ...(log ? { log } : {}),
    },
    partitionsOf: partitionCounts(kafka),
    log,
  };
  function publishBatch(records: OutgoingRecord[]): Promise<PublishAck[]> {
    const spans = traced(records);
    const acks = sendBatch(sender, spans.sent);
    acks.then(spans.acked, (error: unknown) => {
      spans.failed(error);
      renew(error);
    });
    return acks;
  }
  // The records handed over in one turn, or while the previous batch was in flight, go out
  // in one publishBatch; a failure of that produce request is every caller's failure (no
  // record is retried alone).
  const joinTurn = batchPerTurn(publishBatch, { splitOnFailure: false, whileInFlight: true });
  return {
    publish: (topic, key, value, headers) => publishOne(sender, topic, key, value, headers),
    publishBatch,
    connect,
    publishInTurn(topic, key, value, headers) {
      // The caller's trace, taken now: the batch goes out in another turn.
      const parent = traceHeader().traceparent;
      const record = { topic, key, value, ...(headers ? { headers } : {}) };
      return joinTurn({ ...record, ...(parent ? { parent } : {}) });
    },
    async close() {
      await sender.producer.disconnect();
    },
  };
}
