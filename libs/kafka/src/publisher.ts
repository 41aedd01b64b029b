import {
  batchPerTurn,
  kafkaRequests,
  type Logger,
  MESSAGING,
  metrics,
  type ProducerSpan,
  startProducerSpan,
  traceHeader,
  withTimeLimit,
} from "@shop/service";
import type { IHeaders, Kafka, PartitionMetadata, Producer } from "kafkajs";
import { Partitioners } from "kafkajs";
import { refusedForGood } from "./client.ts";

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

export interface PublishAck {
  topic: string;
  partition: number;
  offset: string;
}

export interface OutgoingRecord {
  topic: string;
  /** Text, or bytes kept as they are (a dead letter's key; null when the record had none). */
  key: string | Buffer | null;
  value: string | Buffer;
  /**
   * Sent as they are. A record whose headers carry no traceparent gets its producer span's;
   * one whose headers carry one keeps it (a dead letter is the record as it was).
   */
  headers?: IHeaders;
  /**
   * The traceparent of the work the record belongs to (the outbox row's, the caller's):
   * its producer span's parent. Without it, the work running when it is sent.
   */
  parent?: string;
}

export interface Publisher {
  /**
   * Publishes one record (key and value as text, no type header) and resolves once every
   * in-sync replica has it (acks=all); rejects with PublicacaoNaoConfirmada after timeoutMs,
   * whatever kafkajs's own retries are still doing.
   */
  publish(topic: string, key: string, value: string, headers?: IHeaders): Promise<PublishAck>;
  /**
   * Publishes records in one produce request per broker, in order within each partition,
   * and resolves once every one is acknowledged (acks=all); same time limit. Gives each
   * record's partition and offset, in the order of `registros`.
   */
  publishBatch(records: OutgoingRecord[]): Promise<PublishAck[]>;
  /**
   * Like publish, but batched as load asks (kafkajs has no linger of its own): when no
   * produce request of this path is in flight, the records of the turn go at once; while
   * one is, the records handed over meanwhile go together, in one publishBatch, when it
   * ends. Same acks and time limit; each caller learns of its own record, in order.
   */
  publishInTurn(topic: string, key: string, value: string, headers?: IHeaders): Promise<PublishAck>;
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
}

/** One producer span per record, in the record's own trace (see OutgoingRecord). */
export function traced<R extends OutgoingRecord>(records: R[]) {
  const spans = records.map((r) =>
    startProducerSpan(
      `send ${r.topic}`,
      {
        [MESSAGING.system]: "kafka",
        [MESSAGING.destination]: r.topic,
        [MESSAGING.operationType]: "send",
        [MESSAGING.operationName]: "send",
        ...(r.key !== null ? { [MESSAGING.kafkaKey]: r.key.toString() } : {}),
      },
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

export function createPublisher(
  kafka: Kafka,
  timeoutMs: number,
  log?: Logger,
  options: PublisherOptions = {},
): Publisher {
  const producer: Producer = kafka.producer({
    // The Java client's murmur2 partitioner (checked by the partitioner parity test).
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    // At most 0.5 s between tries: a partition whose leader died moves in 2.5-4 s on the
    // shop's clusters (docs/decisions.md, "Failover"), and a send learns of it within half a
    // second, inside the spec's 5 s wait. Five tries span about 1.7 s; callers try again.
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 },
  });
  producer.on(producer.events.REQUEST, ({ payload }) =>
    kafkaRequests.inc({ api: payload.apiName }),
  );
  // kafkajs keeps retrying a send in the background after our limit: a record reported
  // as not confirmed may still be written later (then we log it). The outbox and the
  // idempotent consumers make that harmless.
  let connecting: Promise<void> | null = null;
  const connect = () => {
    connecting ??= producer.connect().catch((error: unknown) => {
      connecting = null;
      throw error;
    });
    return connecting;
  };

  /** Runs send within the time limit; a late failure has already been reported. */
  async function withinTimeLimit<T>(
    topic: string,
    key: string,
    countsPerTopic: Map<string, number>,
    send: () => Promise<T>,
  ): Promise<T> {
    let timedOut = false;
    const sending = (async () => {
      for (;;) {
        try {
          await connect();
          return await send();
        } catch (error) {
          if (!options.tryUntilLimit || timedOut || refusedForGood(error)) throw error;
          await new Promise((r) => setTimeout(r, 200));
          if (timedOut) throw error;
        }
      }
    })();
    // What became of a record after we reported it as not confirmed: people should know.
    // Counted too (shop_messages_late_written_total, shop_messages_abandoned_total): until
    // one of them moves, a record reported as not confirmed may still be written.
    sending.then(
      () => {
        if (!timedOut) return;
        for (const [d, n] of countsPerTopic) metrics.lateWritten.inc({ destino: d }, n);
        log?.warn(
          "Kafka acknowledged, after the time limit, a record already reported as not confirmed",
          { topic, key },
        );
      },
      (error: unknown) => {
        if (!timedOut) return;
        for (const [d, n] of countsPerTopic) metrics.abandoned.inc({ destino: d }, n);
        log?.warn("kafkajs gave up on a record reported as not confirmed: it was not written", {
          topic,
          key,
          error: String(error),
        });
      },
    );
    try {
      return await withTimeLimit(sending, timeoutMs, () => {
        timedOut = true;
        return new PublishNotConfirmed(topic, key, null, true);
      });
    } catch (error) {
      if (error instanceof PublishNotConfirmed) throw error;
      throw new PublishNotConfirmed(topic, key, error, false);
    }
  }

  const countPerTopic = (records: OutgoingRecord[]) => {
    const m = new Map<string, number>();
    for (const r of records) m.set(r.topic, (m.get(r.topic) ?? 0) + 1);
    return m;
  };

  /** Counts a send in the metrics: handed over, then confirmed or failed. */
  async function counted<T>(
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

  function publish(topic: string, key: string, value: string, headers?: IHeaders) {
    const countsPerTopic = new Map([[topic, 1]]);
    const span = traced([{ topic, key, value, ...(headers ? { headers } : {}) }]);
    const ack = counted(countsPerTopic, () =>
      withinTimeLimit(topic, key, countsPerTopic, async () => {
        const [meta] = await producer.send({
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

  // publishBatch picks each record's partition itself, with kafkajs's own default
  // partitioner (the Java client's murmur2), so that it knows every record's offset: the
  // broker answers with one base offset per partition. Partition counts are re-read every
  // 30 s, so that a topic given more partitions is seen.
  const partitioner = Partitioners.DefaultPartitioner();
  const counts = new Map<string, { n: Promise<number>; em: number }>();
  function partitionsOf(topic: string): Promise<number> {
    const c = counts.get(topic);
    if (c && Date.now() - c.em < 30_000) return c.n;
    const n = (async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        return topics[0]?.partitions.length ?? 1;
      } finally {
        await admin.disconnect();
      }
    })();
    n.catch(() => counts.delete(topic));
    counts.set(topic, { n, em: Date.now() });
    return n;
  }

  function publishBatch(records: OutgoingRecord[]): Promise<PublishAck[]> {
    const spans = traced(records);
    const acks = sendBatch(spans.sent);
    acks.then(spans.acked, spans.failed);
    return acks;
  }

  async function sendBatch(records: OutgoingRecord[]): Promise<PublishAck[]> {
    if (records.length === 0) return [];
    const first = records[0] as OutgoingRecord;
    const countsPerTopic = countPerTopic(records);
    return counted(countsPerTopic, () =>
      withinTimeLimit(
        first.topic,
        `${first.key} (+${records.length - 1})`,
        countsPerTopic,
        async () => {
          const perTopic = new Map<
            string,
            { r: OutgoingRecord; partition: number; pos: number }[]
          >();
          const seen = new Map<string, number>(); // "topic:partition" -> records so far
          const out: { topic: string; partition: number; pos: number }[] = [];
          // What the partitioner needs of each topic: its partitions (one topic per batch, often).
          const metadata = new Map<string, PartitionMetadata[]>();
          for (const topic of new Set(records.map((r) => r.topic))) {
            const n = await partitionsOf(topic);
            metadata.set(
              topic,
              Array.from({ length: n }, (_, i) => ({
                partitionErrorCode: 0,
                partitionId: i,
                leader: 0,
                replicas: [0],
                isr: [0],
              })),
            );
          }
          for (const r of records) {
            const partition = partitioner({
              topic: r.topic,
              partitionMetadata: metadata.get(r.topic) as PartitionMetadata[],
              message: { key: r.key, value: r.value },
            });
            const k = `${r.topic}:${partition}`;
            const pos = seen.get(k) ?? 0;
            seen.set(k, pos + 1);
            const item = { r, partition, pos };
            const list = perTopic.get(r.topic);
            if (list) list.push(item);
            else perTopic.set(r.topic, [item]);
            out.push({ topic: r.topic, partition, pos });
          }
          // kafkajs 2.2.4 can resolve a sendBatch without writing some of its records: when one
          // broker answers NOT_LEADER and another answered already, its retry sends nothing to
          // the broker that answered, even for the partitions that moved to it (the open
          // kafkajs pull request #1798). The fault suite's controller kill lost two
          // acknowledged PedidoCriado records that way. So every partition must be in the
          // answer; the records of those that are not are sent again, in a send of their own.
          const base = new Map<string, bigint>();
          let pending = [...perTopic];
          for (let round = 1; pending.length > 0; round++) {
            const written = await producer.sendBatch({
              acks: -1,
              topicMessages: pending.map(([topic, items]) => ({
                topic,
                messages: items.map(({ r, partition }) => ({
                  key: r.key,
                  value: r.value,
                  partition,
                  ...(r.headers ? { headers: r.headers } : {}),
                })),
              })),
            });
            for (const m of written)
              base.set(`${m.topicName}:${m.partition}`, BigInt(m.baseOffset ?? "0"));
            pending = pending
              .map(
                ([topic, items]) =>
                  [topic, items.filter(({ partition }) => !base.has(`${topic}:${partition}`))] as [
                    string,
                    typeof items,
                  ],
              )
              .filter(([, items]) => items.length > 0);
            if (pending.length === 0) break;
            const unanswered = pending.flatMap(([topic, items]) => [
              ...new Set(items.map((i) => `${topic}[${i.partition}]`)),
            ]);
            if (round >= 5)
              throw new Error(
                `Kafka never answered for ${unanswered.join(", ")} in ${round} sends`,
              );
            log?.warn(
              "kafkajs resolved a send without writing some partitions: sending them again",
              {
                partitions: unanswered.join(","),
              },
            );
          }
          return out.map(({ topic, partition, pos }) => ({
            topic,
            partition,
            offset: String((base.get(`${topic}:${partition}`) ?? 0n) + BigInt(pos)),
          }));
        },
      ),
    );
  }

  // The records handed over in one turn, or while the previous batch was in flight, go out
  // in one publishBatch; a failure of that produce request is every caller's failure (no
  // record is retried alone).
  const joinTurn = batchPerTurn(publishBatch, { splitOnFailure: false, whileInFlight: true });
  function publishInTurn(topic: string, key: string, value: string, headers?: IHeaders) {
    // The caller's trace, taken now: the batch goes out in another turn.
    const parent = traceHeader().traceparent;
    return joinTurn({
      topic,
      key,
      value,
      ...(headers ? { headers } : {}),
      ...(parent ? { parent } : {}),
    });
  }

  return {
    publish: publish,
    publishBatch: publishBatch,
    publishInTurn: publishInTurn,
    async close() {
      await producer.disconnect();
    },
  };
}
