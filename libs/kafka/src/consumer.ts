import type { MessageContract, StuckPartition } from "@shop/contracts";
import { ConsumerEvents, type Logger } from "@shop/service";
import {
  type Consumer,
  type ConsumerConfig,
  type EachBatchHandler,
  type Kafka,
  PartitionAssigners,
} from "kafkajs";
import { consumerClient, withRetries } from "./client.ts";
import { backlogAssigner } from "./consumer/assigner.ts";
import { eachBatchOf } from "./consumer/batch.ts";
import { type Membership, watchGroup } from "./consumer/group.ts";
import { type MemberIdentity, memberIdentityInMemory } from "./consumer/member.ts";
import { RebalanceNotice } from "./consumer/rebalance.ts";
import { type RecordHandling, type RecordMeta, recordHandler } from "./consumer/record.ts";
import { StuckPartitions } from "./consumer/stuck.ts";
import { FETCH_WAIT_MS, HEARTBEAT_MS, SESSION_MS } from "./consumer/timings.ts";
import { Turns } from "./consumer/turns.ts";
import { countStuck, measureLag } from "./lag.ts";
import type { Publisher } from "./publisher.ts";
import { type PartitionTransactions, partitionTransactions } from "./transactions.ts";

export type { Partitions } from "./consumer/group.ts";
export { type MemberIdentity, memberIdentityFile } from "./consumer/member.ts";
export type { RecordMeta } from "./consumer/record.ts";
export { retryDelay } from "./consumer/stuck.ts";
export { HEARTBEAT_MS, SESSION_MS } from "./consumer/timings.ts";

export interface ConsumerStatus extends Membership {
  /** Partitions stuck on a record right now, with the record, attempts and last error. */
  stuck: StuckPartition[];
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
   * How many records of its partitions this consumer handles at once, each of another
   * partition (1 by default: one record at a time). The oldest record waiting goes first
   * (consumer/turns.ts); order within a partition is kept whatever the number.
   */
  partitionsAtOnce?: number;
  /**
   * Where the consumer keeps its member id, to rejoin as the same member after its process
   * is killed and started again (consumer/member.ts). For a process that is its only user.
   */
  memberIdentity?: MemberIdentity;
}

export interface RunningConsumer {
  status(): ConsumerStatus;
  /** received, handled, retried, dead-lettered, acked (offset resolved), committed. */
  events: ConsumerEvents;
  stop(): Promise<void>;
}

/**
 * kafkajs's settings of the shop's consumers (group timings, retries, and the assigner,
 * which reads the group's lag through `kafka` when it deals the partitions).
 */
export function consumerConfig(
  kafka: Kafka,
  groupId: string,
  overrides: Partial<ConsumerConfig> = {},
): ConsumerConfig {
  return {
    groupId,
    sessionTimeout: SESSION_MS,
    heartbeatInterval: HEARTBEAT_MS,
    rebalanceTimeout: 30_000,
    maxWaitTimeInMs: FETCH_WAIT_MS,
    // kafkajs retries a failed fetch or commit on this schedule, and restarts the consumer
    // on it after a crash. Its default grows to 30 s between tries, which left a consumer
    // idle for over a minute after repeated outages. At most half a second between tries,
    // a node's death is noticed within half a second of the cluster moving its work (a
    // fence after 2.5 s), and a broker back within half a second of its answer: each hop
    // of an order (payments' fetch, the orders API's results consumer) resumes inside the
    // 3 s issue 55 allows a whole order. It was 1 s: a coordinator's death resumed in 3.4 s
    // once and a Kafka restart's first result came up to 3.6 s after.
    // 120 tries span about a minute, as its connections' (CONSUMER_CLIENT_RETRY, client.ts):
    // a consumer outlasts a broker's kill and restart (20 s in a CI run under the suite's
    // load) still a member, and fetches again as soon as the broker answers; the group's
    // coordinator is needed only for its next heartbeat and commit. With 25 tries here and
    // the client's 9 s for its connections, it crashed mid-outage and its replacement had to
    // join the group again, which waited for the restarted coordinator to load the group:
    // the "Kafka killed" row's first result came 3.0 s after Kafka answered, 1.8 s of it
    // that load (2026-12-02). An outage past a minute still ends in kafkajs's crash and
    // restart.
    retry: { initialRetryTime: 200, maxRetryTime: 500, retries: 120 },
    // The partitions with the most records waiting go to different members
    // (consumer/assigner.ts); kafkajs's round robin stays offered second, so that a member
    // without it (a plain kafkajs consumer in the same group) can still join.
    partitionAssigners: [backlogAssigner(kafka), PartitionAssigners.roundRobin],
    ...overrides,
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
 * fails; meanwhile its partition is reported stuck (status().stuck, the metric
 * shop_consumer_stuck_partitions) with the record, the attempts and the last error. The
 * same goes for a dead letter that cannot be published (its topic deleted, say).
 *
 * Its parts, one job a file, as kafkajs splits its own runner: consumer/record.ts (one
 * record: decode, contract, dead letter, handler), consumer/stuck.ts (the stuck-partition
 * policy), consumer/offsets.ts (in-order offsets and transaction commits),
 * consumer/batch.ts (the fetch loop: kafkajs's eachBatch), consumer/turns.ts (the oldest
 * record first across the member's partitions), consumer/rebalance.ts (a rebalance heard by
 * one batch, told to all) and consumer/group.ts (kafkajs's events turned into state, events
 * and metrics).
 */
export async function startConsumer<T>(options: ConsumerOptions<T>): Promise<RunningConsumer> {
  const { kafka, groupId, topics, log } = options;
  const state: Membership = { connected: false, group: groupId, partitions: {} };
  const events = new ConsumerEvents();
  const stuck = new StuckPartitions(events, log);
  const transactions = options.transactional
    ? partitionTransactions(kafka, { ...options.transactional, groupId, log })
    : null;
  const handling: RecordHandling<T> = { ...options, events };
  const rebalance = new RebalanceNotice();
  const eachBatch = eachBatchOf({
    onRecord: recordHandler(handling),
    stuck,
    events,
    transactions,
    turns: new Turns(options.partitionsAtOnce ?? 1),
    rebalance,
    ...(options.autoCommitInterval ? { autoCommitInterval: options.autoCommitInterval } : {}),
  });
  let stopping = false;
  // The member a replacement rejoins as: across processes when given (a file), else in this
  // process only.
  const identity = options.memberIdentity ?? memberIdentityInMemory();

  /** After a crash kafkajs will not restart from, a fresh consumer takes its place, as the same member. */
  const start = () =>
    runKafkajsConsumer(
      { ...options, memberIdentity: identity },
      {
        state,
        events,
        eachBatch,
        rebalance,
        transactions,
        onCrash: (crashed) => {
          if (!stopping) setTimeout(() => void replace(crashed), 1_000);
        },
      },
    );

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
      // Within half a second of the broker answering again (a refused connection fails at once).
      setTimeout(() => void replace(crashed), 500);
    }
  }

  let current: Consumer = await start();
  const stopMeasuring = measureLag(kafka, groupId, topics);
  const stopCounting = countStuck(groupId, () => stuck.size);

  return {
    events,
    status: () => ({ ...state, partitions: { ...state.partitions }, stuck: stuck.list() }),
    async stop() {
      stopping = true;
      stopMeasuring();
      stopCounting();
      await current.disconnect();
      // It left its group: no member to rejoin as next time.
      identity.save(null);
      await transactions?.close();
    },
  };
}

/** Up to how many of a member's partitions kafkajs hands over at once: PARTICOES_EM_PARALELO's most. */
const BATCHES_AT_ONCE = 64;

/** One kafkajs consumer, connected, subscribed and running; `onCrash` when kafkajs gives up. */
async function runKafkajsConsumer<T>(
  options: ConsumerOptions<T>,
  run: {
    state: Membership;
    events: ConsumerEvents;
    eachBatch: EachBatchHandler;
    /** Told by eachBatch of a rebalance; a new generation once the member joined again. */
    rebalance: RebalanceNotice;
    /**
     * With transactions the offsets are committed in them, never by kafkajs; they are told
     * of each assignment.
     */
    transactions: PartitionTransactions | null;
    onCrash: (crashed: Consumer) => void;
  },
): Promise<Consumer> {
  const { kafka, groupId, topics, log } = options;
  const identity = options.memberIdentity;
  const rejoinAs = identity?.load() ?? null;
  // rejoinAs: patches/kafkajs+2.2.4.patch (kafkajs's types do not know it).
  const consumer = consumerClient(kafka).consumer({
    ...consumerConfig(kafka, groupId, options.consumer),
    ...(rejoinAs ? { rejoinAs } : {}),
  } as ConsumerConfig);
  watchGroup(consumer, run.state, run.events, log, () => run.onCrash(consumer));
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    run.rebalance.joined();
    identity?.save(payload.memberId);
    void run.transactions?.assigned(payload.memberAssignment);
  });
  await consumer.connect();
  // Right after its topics were created, a broker of a cluster (one just restarted, say)
  // may not know them yet: UNKNOWN_TOPIC_OR_PARTITION is retried, not a failed start.
  await withRetries(() => consumer.subscribe({ topics, fromBeginning: true }));
  await consumer.run({
    autoCommit: run.transactions === null,
    // Every batch of a fetch at once, so that their records take turns, the oldest first
    // (consumer/turns.ts); how many are handled at a time is partitionsAtOnce's.
    partitionsConsumedConcurrently: BATCHES_AT_ONCE,
    ...(options.autoCommitInterval && run.transactions === null
      ? { autoCommitInterval: options.autoCommitInterval }
      : {}),
    eachBatchAutoResolve: false,
    eachBatch: run.eachBatch,
  });
  return consumer;
}
