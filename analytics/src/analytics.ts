import { kafkaNames } from "@shop/contracts";
import { createKafka, groupsLag, type KafkaSecurity, withRetries } from "@shop/kafka";
import { escapeControls, type Logger } from "@shop/service";
import type { Admin, Consumer, Kafka } from "kafkajs";
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
export class ReplayRefused extends Error {}

type Positions = Map<string, number>; // "topic:partition" -> offset
const tp = (topic: string, partition: number) => `${topic}:${partition}`;

/** Each partition's first offset still held (`low`) and its end offset (`end`), in one read. */
async function topicOffsets(admin: Admin, topics: string[]) {
  const low: Positions = new Map();
  const end: Positions = new Map();
  for (const topic of topics) {
    for (const p of await withRetries(() => admin.fetchTopicOffsets(topic))) {
      low.set(tp(topic, p.partition), Number(p.low));
      end.set(tp(topic, p.partition), Number(p.high));
    }
  }
  return { low, end };
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
    throw new ReplayRefused(
      `cannot replay: group ${groupId} has ${members.length} active member(s): ${who}. ` +
        "Kafka only resets the offsets of a group with no active member; stop those readers and try again.",
    );
  }
  for (const topic of topics)
    await withRetries(() => admin.resetOffsets({ groupId, topic, earliest: true }));
}

/** Where a run starts and ends: each partition's position and the end offsets seen at start. */
interface Plan {
  end: Positions;
  position: Positions;
  /** Records between the positions and the end offsets. */
  total: number;
}

/** A run's progress: the view being rebuilt, and how far each partition is read. */
interface Reading extends Plan {
  opts: AnalyticsOptions;
  ordersView: ReturnType<typeof newOrdersView>;
  read: number;
  invalid: number;
  /** Ends the run (caught up, Ctrl-C, or a crash). */
  finish: () => void;
  /** The first error that ended the run: the consumer's crash, or a batch that failed. */
  crashed: Error | null;
}

/** A crash of the consumer or of a batch ends the run; the first one is thrown after it. */
function fail(reading: Reading, error: Error): void {
  reading.crashed ??= error;
  reading.finish();
}

/**
 * Reads both topics in its own group, from offset 0 when the group has none, and prints one
 * line per record and the dashboard after each batch. Follows forever, or until every
 * partition is read up to the end offsets seen at start (--until-caught-up).
 * The story: planRun (offsets, --replay) → readTopics (the consumer) → applyBatch per
 * batch → finalSummary.
 */
export async function runAnalytics(opts: AnalyticsOptions): Promise<Summary> {
  const names = kafkaNames(opts.prefix);
  const topics = [names.topics.pedidosCriados, names.topics.pagamentosResultados];
  const kafka = createKafka(opts.brokers, `analytics-${opts.grupo}`, opts.log, opts.security);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const plan = await planRun(admin, opts, topics);
    const reading: Reading = {
      ...plan,
      opts,
      ordersView: newOrdersView(),
      read: 0,
      invalid: 0,
      finish: () => {},
      crashed: null,
    };
    await readTopics(kafka, reading, topics, names.topics.pedidosCriados);
    opts.output.progress(reading.read, reading.total, true);
    const summary = await finalSummary(admin, reading, topics);
    opts.output.final(summary);
    return summary;
  } finally {
    await admin.disconnect();
  }
}

/** The topics checked, the group's offsets reset with --replay, the start and end positions. */
async function planRun(admin: Admin, opts: AnalyticsOptions, topics: string[]): Promise<Plan> {
  const { output, grupo } = opts;
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
  const { low, end } = await topicOffsets(admin, topics);
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
  return { end, position, total };
}

const caughtUp = (r: Plan) => [...r.end].every(([key, high]) => (r.position.get(key) ?? 0) >= high);

/** The group's consumer, until the run ends; kafkajs commits what was handed over. */
async function readTopics(kafka: Kafka, reading: Reading, topics: string[], criados: string) {
  const { opts } = reading;
  const done = new Promise<void>((resolve) => {
    reading.finish = resolve;
  });
  opts.signal?.addEventListener("abort", () => reading.finish(), { once: true });
  if (opts.untilCaughtUp && caughtUp(reading)) reading.finish();
  const consumer = kafka.consumer({
    groupId: opts.grupo,
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
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) fail(reading, payload.error);
  });
  const decoder = new BatchDecoder();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    const applied = await runDecoding(consumer, decoder, reading, criados);
    await done;
    await applied();
  } finally {
    await consumer.disconnect(); // commits what was read
    await decoder.close();
  }
  if (reading.crashed) throw reading.crashed;
}

/**
 * Batches are decoded on another thread (decoder.ts) and applied here in the order they
 * were fetched, while kafkajs fetches the next. At most AHEAD batches wait for their
 * decoding: kafkajs commits a batch's offsets once it is handed over, so what is committed
 * is never more than that ahead of the view (which lives in memory, and is rebuilt by a
 * replay, so a crash loses nothing more). Returns what waits for the last batch applied.
 */
async function runDecoding(
  consumer: Consumer,
  decoder: BatchDecoder,
  reading: Reading,
  criados: string,
): Promise<() => Promise<void>> {
  const AHEAD = 4;
  let applied: Promise<void> = Promise.resolve();
  let ahead = 0;
  await consumer.run({
    eachBatch: async ({ batch }) => {
      // Only what applying needs is kept past this call (the topic, the partition, the
      // offsets): the batch and its records are kafkajs's to drop as soon as it returns.
      const { topic, partition } = batch;
      const messages = batch.messages;
      // Only what the lines need is kept until the batch is applied, not its records.
      const offsets = reading.opts.output.quiet ? null : messages.map((m) => m.offset);
      // The batch's last offset, not its last record's: a transaction's commit marker
      // after the records is read too.
      const lastOffset = batch.lastOffset();
      const decoding = decoder.decode(
        topic === criados,
        messages.map((m) => m.value),
      );
      ahead++;
      applied = applied
        .then(() => decoding)
        .then((decoded) => {
          ahead--;
          applyBatch(reading, topic, partition, offsets, lastOffset, decoded);
        })
        .catch((error: Error) => fail(reading, error));
      while (ahead > AHEAD && !reading.crashed) await applied;
    },
  });
  return () => applied;
}

/**
 * A decoded batch applied to the view (applyPedidoCriado, applyResultado), its lines and
 * the dashboard shown. With --quiet nothing per record or per batch is shown: none of it
 * is built (on a replay of a million records the lines and per-batch dashboards were most
 * of the garbage and much of the time).
 */
function applyBatch(
  reading: Reading,
  topic: string,
  partition: number,
  /** The records' offsets, for the lines shown without --quiet. */
  offsets: string[] | null,
  lastOffset: string,
  decoded: DecodedBatch,
): void {
  const { opts, ordersView } = reading;
  const detailed = !opts.output.quiet;
  const lines: string[] = [];
  for (let i = 0; i < decoded.length; i++) {
    const r = decoded.record(i);
    const where = () => `${topic} partition=${partition} offset=${offsets?.[i]}`;
    if (!r.ok) {
      reading.invalid++;
      if (detailed) lines.push(`${where()} INVALID ${escapeControls(r.reason)}`);
    } else {
      if (r.criado) applyPedidoCriado(ordersView, r);
      else applyResultado(ordersView, r);
      if (detailed) lines.push(`${where()} pedido=${r.pedidoId}`);
    }
    reading.read++;
  }
  reading.position.set(tp(topic, partition), Number(lastOffset) + 1);
  if (detailed || opts.onDashboard) {
    const current = dashboard(ordersView);
    if (detailed) opts.output.batch(lines, dashboardText(opts.grupo, current, reading.invalid));
    opts.onDashboard?.(current);
  }
  opts.output.progress(reading.read, reading.total);
  if (opts.untilCaughtUp && caughtUp(reading)) reading.finish();
}

/** The dashboard, and the lag the platform panel and /metrics report, from the same computation. */
async function finalSummary(admin: Admin, reading: Reading, topics: string[]): Promise<Summary> {
  const { grupo } = reading.opts;
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
  return {
    grupo,
    dashboard: dashboard(reading.ordersView),
    read: reading.read,
    invalid: reading.invalid,
    lag,
  };
}
