import { kafkaNames } from "@shop/contracts";
import { createKafka, groupsLag, type KafkaSecurity, withRetries } from "@shop/kafka";
import { escapeControls, type Logger } from "@shop/service";
import type { Admin, Kafka } from "kafkajs";
import { BatchDecoder, type DecodedBatch } from "./decoder.ts";
import {
  applyPedidoCriado,
  applyResultado,
  type Dashboard,
  dashboard,
  newOrdersView,
} from "./domain/orders-view.ts";
import { type AnalyticsOutput, dashboardText, type PartitionLag, type Summary } from "./output.ts";

export interface AnalyticsOptions {
  brokers: string[];
  /** TLS and SASL (KAFKA_SSL, KAFKA_SASL_*); none when absent. */
  security?: KafkaSecurity;
  prefix: string;
  grupo: string;
  replay: boolean;
  untilCaughtUp: boolean;
  output: AnalyticsOutput;
  log: Logger;
  /** Ends a follow-mode run (Ctrl-C). */
  signal?: AbortSignal;
  /** Called with the dashboard after each batch (tests watch a follower with it). */
  onDashboard?: (p: Dashboard) => void;
}

/** Replay was asked while the group has active members: Kafka would refuse the reset. */
export class ReplayRecusado extends Error {}

type Positions = Map<string, number>; // "topic:partition" -> offset
const tp = (topic: string, partition: number) => `${topic}:${partition}`;

async function endOffsets(admin: Admin, topics: string[]): Promise<Positions> {
  const end: Positions = new Map();
  for (const topic of topics) {
    for (const p of await withRetries(() => admin.fetchTopicOffsets(topic)))
      end.set(tp(topic, p.partition), Number(p.high));
  }
  return end;
}

async function startOffsets(admin: Admin, topics: string[]): Promise<Positions> {
  const start: Positions = new Map();
  for (const topic of topics) {
    for (const p of await withRetries(() => admin.fetchTopicOffsets(topic)))
      start.set(tp(topic, p.partition), Number(p.low));
  }
  return start;
}

async function groupOffsets(
  admin: Admin,
  groupId: string,
  topics: string[],
): Promise<Map<string, number | null>> {
  const committed = new Map<string, number | null>();
  // A group new to the broker may briefly answer NOT_COORDINATOR while its coordinator loads.
  for (const t of await withRetries(() => admin.fetchOffsets({ groupId, topics }))) {
    for (const p of t.partitions)
      committed.set(tp(t.topic, p.partition), Number(p.offset) >= 0 ? Number(p.offset) : null);
  }
  return committed;
}

async function replay(admin: Admin, groupId: string, topics: string[]): Promise<void> {
  const [group] = (await withRetries(() => admin.describeGroups([groupId]))).groups;
  const members = group?.members ?? [];
  if (members.length > 0) {
    const who = members.map((m) => escapeControls(`${m.clientId} (${m.clientHost})`)).join(", ");
    throw new ReplayRecusado(
      `cannot replay: group ${groupId} has ${members.length} active member(s): ${who}. ` +
        "Kafka only resets the offsets of a group with no active member; stop those readers and try again.",
    );
  }
  for (const topic of topics)
    await withRetries(() => admin.resetOffsets({ groupId, topic, earliest: true }));
}

/**
 * Reads both topics in its own group, from offset 0 when the group has none, and prints one
 * line per record and the dashboard after each batch. Follows forever, or until every
 * partition is read up to the end offsets seen at start (--until-caught-up).
 */
export async function runAnalytics(opts: AnalyticsOptions): Promise<Summary> {
  const { output, grupo } = opts;
  const names = kafkaNames(opts.prefix);
  const topics = [names.topics.pedidosCriados, names.topics.pagamentosResultados];
  const kafka: Kafka = createKafka(opts.brokers, `analytics-${grupo}`, opts.log, opts.security);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0)
      throw new Error(
        `topic(s) ${missing.join(", ")} not found: start the orders API first, which creates them`,
      );

    if (opts.replay) {
      await replay(admin, grupo, topics);
      output.info(
        `replay: the offsets of group ${grupo} are back at the earliest offset; reading everything again`,
      );
    }
    const end = await endOffsets(admin, topics);
    const low = await startOffsets(admin, topics);
    const committed = await groupOffsets(admin, grupo, topics);
    const position: Positions = new Map();
    for (const key of end.keys()) position.set(key, committed.get(key) ?? low.get(key) ?? 0);
    const total = [...end].reduce(
      (sum, [key, high]) => sum + Math.max(0, high - (position.get(key) ?? 0)),
      0,
    );
    const resumed = [...committed.values()].some((c) => c !== null);
    output.info(
      `analytics: group ${grupo}, ${total} records to read up to the current end` +
        (resumed && !opts.replay
          ? " (resuming from the group's committed offsets: the view covers only what is read now; --replay rebuilds it from offset 0)"
          : " (from offset 0)"),
    );

    const ordersView = newOrdersView();
    let read = 0;
    let invalid = 0;
    const caughtUp = () => [...end].every(([key, high]) => (position.get(key) ?? 0) >= high);

    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    opts.signal?.addEventListener("abort", () => finish(), { once: true });
    if (opts.untilCaughtUp && caughtUp()) finish();

    const consumer = kafka.consumer({
      groupId: grupo,
      // Following, a fetch waits up to half a second for new records. Reading until caught
      // up, it should not: the fetch sent after the last records is still waiting when the
      // consumer disconnects, and the disconnect waits for it (a replay's last 0.45 s).
      maxWaitTimeInMs: opts.untilCaughtUp ? 50 : 500,
      // 1 MB a fetch rather than kafkajs's 10 MB: kafkajs decodes a whole fetch into
      // objects (about 1.6 KB of them per record) that all live until their batch is
      // handed over, and with a small young generation a big fetch's records outlived it
      // and went to the old one. Over a replay of 1,000,000 records (npm run bench --
      // --only=replay, median of 3 each, under the services' NODE_FLAGS, before the CLI
      // had its own): 512 KB, 1 MB, 2 MB and 8 MB read 304k, 346k, 350-354k and 328k
      // records/s, at 170, 192, 204-214 and 286 MB of peak RSS. (Before the contracts' quick yes, while decoding was the bottleneck,
      // the sizes were within noise and 512 KB saved the most memory.)
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 1024 * 1024,
    });
    let crashed: Error | null = null;
    const decoder = new BatchDecoder();
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) {
        crashed = payload.error;
        finish();
      }
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      // Batches are decoded on another thread (decoder.ts) and applied here in the order
      // they were fetched, while kafkajs fetches the next. At most AHEAD batches wait for
      // their decoding: kafkajs commits a batch's offsets once it is handed over, so what
      // is committed is never more than that ahead of the view (which lives in memory, and
      // is rebuilt by a replay, so a crash loses nothing more).
      const AHEAD = 4;
      let applied: Promise<void> = Promise.resolve();
      let ahead = 0;
      const failed = (error: Error) => {
        crashed ??= error;
        finish();
      };
      const applyBatch = (
        topic: string,
        partition: number,
        /** The records' offsets, for the lines shown without --quiet. */
        offsets: string[] | null,
        lastOffset: string,
        decoded: DecodedBatch,
      ) => {
        // With --quiet nothing per record or per batch is shown: build none of it (on a
        // replay of a million records the lines and per-batch dashboards were most of
        // the garbage and much of the time).
        const detailed = !output.quiet;
        const lines: string[] = [];
        for (let i = 0; i < decoded.length; i++) {
          const r = decoded.record(i);
          const where = () => `${topic} partition=${partition} offset=${offsets?.[i]}`;
          if (!r.ok) {
            invalid++;
            if (detailed) lines.push(`${where()} INVALID ${escapeControls(r.reason)}`);
          } else {
            if (r.criado) applyPedidoCriado(ordersView, r);
            else applyResultado(ordersView, r);
            if (detailed) lines.push(`${where()} pedido=${r.pedidoId}`);
          }
          read++;
        }
        position.set(tp(topic, partition), Number(lastOffset) + 1);
        if (detailed || opts.onDashboard) {
          const current = dashboard(ordersView);
          if (detailed) output.batch(lines, dashboardText(grupo, current, invalid));
          opts.onDashboard?.(current);
        }
        output.progress(read, total);
        if (opts.untilCaughtUp && caughtUp()) finish();
      };
      await consumer.run({
        eachBatch: async ({ batch }) => {
          // Only what applying needs is kept past this call (the topic, the partition, the
          // offsets): the batch and its records are kafkajs's to drop as soon as it returns.
          const { topic, partition } = batch;
          const isCriado = topic === names.topics.pedidosCriados;
          const messages = batch.messages;
          // Only what the lines need is kept until the batch is applied, not its records.
          const offsets = output.quiet ? null : messages.map((m) => m.offset);
          // The batch's last offset, not its last record's: a transaction's commit marker
          // after the records is read too.
          const lastOffset = batch.lastOffset();
          const decoding = decoder.decode(
            isCriado,
            messages.map((m) => m.value),
          );
          ahead++;
          applied = applied
            .then(() => decoding)
            .then((decoded) => {
              ahead--;
              applyBatch(topic, partition, offsets, lastOffset, decoded);
            })
            .catch(failed);
          while (ahead > AHEAD && !crashed) await applied;
        },
      });
      await done;
      await applied;
    } finally {
      await consumer.disconnect(); // commits what was read
      await decoder.close();
    }
    if (crashed) throw crashed;
    output.progress(read, total, true);

    // The lag the platform panel and /metrics report, from the same computation.
    const lag: PartitionLag[] = (
      await groupsLag(admin, Object.fromEntries(topics.map((t) => [t, [grupo]])))
    ).flatMap(({ topic, particoes: partitions }) =>
      partitions.map((p) => ({
        topic,
        partition: p.partition,
        endOffset: p.endOffset,
        committedOffset: p.grupos[0]?.committedOffset ?? null,
        lag: p.grupos[0]?.lag ?? 0,
      })),
    );
    const summary: Summary = {
      grupo,
      dashboard: dashboard(ordersView),
      read: read,
      invalid: invalid,
      lag,
    };
    output.final(summary);
    return summary;
  } finally {
    await admin.disconnect();
  }
}
