import { CLUSTER_REPLICATION } from "@shop/contracts";
import { type Logger, readSettingFile, untrustedCertificate } from "@shop/service";
import {
  type Admin,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
  type RetryOptions,
  type SASLOptions,
} from "kafkajs";
import { type KafkaSecurity, NO_KAFKA_SECURITY } from "./config.ts";

/**
 * What kafkajs logs at error level for conditions that are expected while services start
 * together or a group settles, and that kafkajs itself retries or handles: another service
 * created the topic first, the group coordinator or a new topic's leader is not elected or
 * known yet, a rebalance is on.
 * kafkajs logs every error answer of a request as "Response <API>(...)" with the broker's
 * message; these are logged at info level. Every other error stays an error.
 */
const EXPECTED = new Set([
  "Topic creation errors",
  "The group coordinator is not available",
  "This is not the correct coordinator for this group",
  // kafkajs's own wording of GROUP_LOAD_IN_PROGRESS, which its patched consumer retries.
  "The coordinator is loading and hence can't process requests for this group",
  "The group is rebalancing, so a rejoin is needed",
  "There is no leader for this topic-partition as we are in the middle of a leadership election",
  "This server does not host this topic-partition",
  "This server is not the leader for that topic-partition",
  "The coordinator is not aware of this member",
]);

/**
 * kafkajs's warning for an idempotent producer whose retries are bounded, as the outbox
 * relay's are on purpose (createPublisher's idempotent option says why): logged at info.
 */
const CHOSEN = "Limiting retries for the idempotent producer may invalidate EoS guarantees";

/** True for a kafkajs log entry that reports an expected, handled transient. */
export function expectedTransient(message: string, error: string | undefined): boolean {
  if (message.startsWith("Response ") && error !== undefined) return EXPECTED.has(error);
  return message === "The coordinator is not aware of this member, re-joining the group";
}

/**
 * True for kafkajs's "Crash: <name>: <message>" of a consumer that stopped on one of the
 * expected transients and that kafkajs restarts: on a new Kafka, the first start finds its
 * group's coordinator still loading (issue 47). Its "Restarting the consumer" line follows.
 */
export function expectedCrash(message: string): boolean {
  const cause = /^Crash: \w+: (.*)$/.exec(message)?.[1];
  return cause !== undefined && EXPECTED.has(cause);
}

/** kafkajs's TLS and SASL options from the settings; an unreadable CA file names its setting. */
function securityOptions({ ssl, sasl }: KafkaSecurity): Pick<KafkaConfig, "ssl" | "sasl"> {
  return {
    ...(ssl?.caFile
      ? { ssl: { ca: [readSettingFile("KAFKA_SSL_CA_FILE", ssl.caFile)] } }
      : ssl
        ? { ssl: true }
        : {}),
    // kafkajs types each mechanism apart; the settings allow only the three it knows.
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  };
}

/**
 * A connection problem no retry can cure, said in terms of the setting to fix: Kafka
 * refused the credentials, or its certificate is not one the CA file vouches for. Null
 * for anything else (a broker that is down, a leader election): those are retried.
 */
export function securityProblem(error: unknown): Error | null {
  const e = error as { name?: string; message?: string; code?: string };
  const message = e?.message ?? String(error);
  if (e?.name === "KafkaJSSASLAuthenticationError" || /SASL .*authentication failed/i.test(message))
    return new Error(
      `Kafka refused the credentials (KAFKA_SASL_USER, KAFKA_SASL_PASSWORD, KAFKA_SASL_MECHANISM): ${message}`,
      { cause: error },
    );
  if (untrustedCertificate(error))
    return new Error(
      `Kafka's TLS certificate is not trusted (KAFKA_SSL_CA_FILE names the CA that signed it): ${message}`,
      { cause: error },
    );
  return null;
}

/**
 * Why Kafka could not be used, said for a person: where, and what to check. For the
 * command-line tools, which end on it instead of a stack trace.
 */
export function kafkaProblem(brokers: string[], error: unknown): string {
  const where = `Kafka at ${brokers.join(",")}`;
  const security = securityProblem(error);
  if (security) return `${where}: ${security.message}`;
  const message = error instanceof Error ? error.message : String(error);
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|Connection error|Connection timeout/i.test(message))
    return `${where} cannot be reached (${message}): is it running? npm run infra -- kafka start`;
  return `${where}: ${message}`;
}

/**
 * How a client's own work is tried again: finding a group's coordinator, a partition's
 * leader, a broker's connection (kafkajs's Cluster, under every consumer, producer and
 * admin of the client). kafkajs's default waits 0.3 s, then twice as long each time, five
 * times: after a node's death a consumer went on asking for the dead coordinator on that
 * schedule, and the orders API applied its first result 4.1 s after the group had moved to
 * a survivor (the coordinator-killed fault, issue 55: its results waited from the kill to
 * 3.7 s after the survivor had loaded the group). At most half a second apart, twenty
 * times, it gives up after about the same 9 s as the default.
 */
export const CLIENT_RETRY: RetryOptions = { initialRetryTime: 100, maxRetryTime: 500, retries: 20 };

/**
 * A consumer's connections and metadata: tried again for about a minute, not CLIENT_RETRY's
 * 9 s. kafkajs gives a consumer's own connections the client's retries, whatever the
 * consumer's `retry` says, and a consumer whose connection retries ran out during an outage
 * crashed (kafkajs: "Connection error", not retried further) and was replaced: the replacement
 * had to join its group again, which after a broker's restart waits for the coordinator to
 * load the group. Still a member, a consumer fetches again as soon as the broker answers
 * (consumerConfig, consumer.ts, says what that bought).
 */
export const CONSUMER_CLIENT_RETRY: RetryOptions = {
  initialRetryTime: 100,
  maxRetryTime: 500,
  retries: 120,
};

/** What each client of createKafka was made with, for its consumers' client (consumerClient). */
const made = new WeakMap<Kafka, { settings: Parameters<typeof createKafka>; consumers?: Kafka }>();

/**
 * The client a consumer of `kafka` runs on: the same settings with CONSUMER_CLIENT_RETRY.
 * A client made elsewhere (a test's own) is used as it is.
 */
export function consumerClient(kafka: Kafka): Kafka {
  const m = made.get(kafka);
  if (!m) return kafka;
  const [brokers, clientId, log, security] = m.settings;
  m.consumers ??= createKafka(brokers, clientId, log, security, CONSUMER_CLIENT_RETRY);
  return m.consumers;
}

/** A kafkajs client whose own log lines go through our logger, warnings and errors only. */
export function createKafka(
  brokers: string[],
  clientId: string,
  log: Logger,
  security: KafkaSecurity = NO_KAFKA_SECURITY,
  /** How kafkajs tries again before an operation fails (CLIENT_RETRY unless given). */
  retry: RetryOptions = CLIENT_RETRY,
): Kafka {
  const kafka = new Kafka({
    clientId,
    brokers,
    ...securityOptions(security),
    retry,
    connectionTimeout: 1000,
    logLevel: logLevel.WARN,
    logCreator: () => {
      // The groups whose consumer crashed on an expected transient: their restart is told at info too.
      const restarting = new Set<string>();
      return ({ level, log: entry }: LogEntry) => {
        const { message, broker, error, groupId } = entry as {
          message: string;
          broker?: string;
          error?: string;
          groupId?: string;
        };
        const fields = Object.fromEntries(
          Object.entries({ broker, error, groupId }).filter(([, v]) => v !== undefined),
        );
        const quietRestart =
          groupId !== undefined &&
          message.startsWith("Restarting the consumer") &&
          restarting.delete(groupId);
        if (groupId !== undefined && expectedCrash(message)) restarting.add(groupId);
        if (message === CHOSEN) log.info(`kafkajs (chosen on purpose): ${message}`, fields);
        else if (expectedTransient(message, error) || expectedCrash(message) || quietRestart)
          log.info(`kafkajs (expected, kafkajs handles it): ${message}`, fields);
        else (level <= logLevel.ERROR ? log.error : log.warn)(`kafkajs: ${message}`, fields);
      };
    },
  });
  made.set(kafka, { settings: [brokers, clientId, log, security, retry] });
  return kafka;
}

export interface TopicSpec {
  topic: string;
  numPartitions: number;
}

/**
 * Runs fn again while it fails with an error Kafka marks retriable (a broker that has just
 * started may not host its partitions yet), for up to `ms`.
 */
export async function withRetries<T>(fn: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const fatal = securityProblem(error);
      if (fatal) throw fatal;
      const retriable = (error as { retriable?: boolean }).retriable === true;
      if (!retriable || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * admin.createTopics with waitForLeaders, tried again while it fails with an error Kafka
 * marks retriable (withRetries); a try after a failed one waits for the leaders itself
 * (leadersOf). For topics with settings of their own (the dead-letter CLI's compacted
 * redrive topic, the tests'); the shop's own topics go through ensureTopics.
 */
export function createTopicsWaiting(
  admin: Admin,
  topics: Parameters<Admin["createTopics"]>[0]["topics"],
): Promise<boolean> {
  const names = topics.map((t) => t.topic);
  let tries = 0;
  return withRetries(async () => {
    const retry = tries++ > 0;
    const created = await admin.createTopics({ waitForLeaders: true, topics });
    if (retry) await leadersOf(admin, names);
    return created;
  });
}

/**
 * Resolves once every partition of `topics` has a leader; fails retriably until then.
 * kafkajs's own wait for a new topic's leaders (createTopics' waitForLeaders) retries
 * LEADER_NOT_AVAILABLE only; a busy broker may first answer with UNKNOWN_TOPIC_OR_PARTITION
 * ("This server does not host this topic-partition", tulios/kafkajs#1222), and the next try
 * then finds the topic made (createTopics returns false, ensureTopics finds nothing missing)
 * and would go on without any wait. On 2026-11-29 that sent the dead-letter CLI's first
 * record to a compacted topic no broker hosted yet, and the poison lab failed. So a try
 * after a failed one waits for the leaders here.
 */
async function leadersOf(admin: Admin, topics: string[]): Promise<void> {
  const metadata = await admin.fetchTopicMetadata({ topics });
  const leaderless = metadata.topics.flatMap((t) =>
    t.partitions.filter((p) => p.leader < 0 || p.partitionErrorCode !== 0).map(() => t.name),
  );
  if (leaderless.length > 0) {
    throw Object.assign(new Error(`no leader yet for ${[...new Set(leaderless)].join(", ")}`), {
      retriable: true,
    });
  }
}

/**
 * Creates the topics when absent; does nothing for those that exist. On a cluster of three
 * or more brokers they get CLUSTER_REPLICATION (3 replicas, min.insync.replicas 2) whatever
 * `replicationFactor` says; on fewer, `replicationFactor`.
 */
export function ensureTopics(
  kafka: Kafka,
  topics: TopicSpec[],
  replicationFactor: number,
): Promise<string[]> {
  let tries = 0;
  return withRetries(() => createMissing(kafka, topics, replicationFactor, tries++ > 0));
}

/** One try of ensureTopics; a retry also waits for the topics' leaders (leadersOf). */
async function createMissing(
  kafka: Kafka,
  topics: TopicSpec[],
  replicationFactor: number,
  retry: boolean,
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      const cluster = (await admin.describeCluster()).brokers.length >= 3;
      const replication = cluster
        ? {
            replicationFactor: CLUSTER_REPLICATION.replicationFactor,
            configEntries: [
              {
                name: "min.insync.replicas",
                value: String(CLUSTER_REPLICATION.minInsyncReplicas),
              },
            ],
          }
        : { replicationFactor };
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({ ...t, ...replication })),
      });
    }
    const names = topics.map((t) => t.topic);
    if (retry) await leadersOf(admin, names);
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}

/**
 * True when Kafka refused a request for good: somewhere in the error's chain (our
 * PublishNotConfirmed, kafkajs's retry wrapper) is a broker error kafkajs marks not
 * retriable, such as MESSAGE_TOO_LARGE or TOPIC_AUTHORIZATION_FAILED. Sending the same
 * bytes again would fail the same way. A broker that is down or slow is not this.
 */
export function refusedForGood(error: unknown): boolean {
  return protocolErrorIn(error, (e) => e.retriable === false && !PRODUCER_STATE.has(e.type ?? ""));
}

/**
 * The broker's errors about an idempotent producer's own state, not about the records: its
 * sequence numbers out of step with what the broker wrote (a batch kafkajs gave up on was
 * written after all, and the next one did not repeat it exactly), or its id forgotten (idle
 * past producer.id.expiration.ms). kafkajs marks them not retriable; a new producer id sends
 * the same records again and is taken (createPublisher's idempotent option).
 */
const PRODUCER_STATE = new Set([
  "OUT_OF_ORDER_SEQUENCE_NUMBER",
  "DUPLICATE_SEQUENCE_NUMBER",
  "INVALID_PRODUCER_EPOCH",
  "UNKNOWN_PRODUCER_ID",
  "INVALID_PRODUCER_ID_MAPPING",
]);

/** True when the error's chain holds one of PRODUCER_STATE: the producer needs a new id. */
export function producerStateLost(error: unknown): boolean {
  return protocolErrorIn(error, (e) => PRODUCER_STATE.has(e.type ?? ""));
}

type ProtocolError = { name?: string; type?: string; retriable?: boolean; cause?: unknown };

/** Whether a kafkajs protocol error in the error's chain (our wrappers' causes) passes `test`. */
function protocolErrorIn(error: unknown, test: (e: ProtocolError) => boolean): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as ProtocolError;
    if (e.name === "KafkaJSProtocolError" && test(e)) return true;
    current = e.cause;
  }
  return false;
}
