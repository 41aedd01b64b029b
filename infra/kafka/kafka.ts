import { execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { type InfraConfig, type Log, ROOT } from "../config.ts";
import { twoFreePorts } from "../ports.ts";

/**
 * The real Apache Kafka broker, single node in KRaft mode, run from the jars that Maven
 * fetches from Maven Central (infra/kafka/pom.xml). Everything it writes lives under
 * infra/kafka/.work, which git ignores.
 */
export const KAFKA_DIR = join(ROOT, "infra", "kafka");
const WORK = join(KAFKA_DIR, ".work");
/** The jars; KAFKA_JARS_DIR puts them elsewhere (a test of a checkout that has none yet). */
export const KAFKA_LIB = process.env.KAFKA_JARS_DIR ?? join(WORK, "lib");

/**
 * Where a named broker or cluster keeps its folders: a test's or an experiment's own in the
 * scratch folder when a test run set one (SHOP_SCRATCH_DIR: in memory, infra/scratch.ts),
 * else in .work/; the checkout's own (`default`, npm start's, and `cluster`) always in .work/.
 */
function folderOf(name: string): string {
  const scratch = process.env.SHOP_SCRATCH_DIR;
  return scratch && !CHECKOUTS_OWN.test(name) ? join(scratch, "kafka") : WORK;
}
/** The checkout's own broker, cluster and the cluster's nodes. */
const CHECKOUTS_OWN = /^(default|cluster|cluster-(controller-)?\d+)$/;

/**
 * Where one broker keeps its data, config, log and pid. The default broker (the one
 * `npm run infra` starts) lives in .work/; a named one (a test's own broker that it may stop
 * and kill) in <folderOf>/<name>/, a node of the checkout's own cluster in .work/cluster-<id>/.
 */
export function paths(instance: string) {
  const dir = instance === "default" ? WORK : join(folderOf(instance), instance);
  return {
    dir,
    data: join(dir, "data"),
    conf: join(dir, "server.properties"),
    log: join(dir, "kafka.log"),
    pid: join(dir, "kafka.pid"),
  };
}
type Paths = ReturnType<typeof paths>;

/** Classpath of the broker, its tools and the Java client. */
export const KAFKA_CLASSPATH = join(KAFKA_LIB, "*");
/** Log settings of the broker and its tools (Kafka 4 logs through log4j 2). */
export const KAFKA_LOG4J = `-Dlog4j2.configurationFile=${join(KAFKA_DIR, "log4j2.properties")}`;

/** The Apache Kafka version infra/kafka/pom.xml brings (the one place it is written). */
export const KAFKA_VERSION = (() => {
  const pom = readFileSync(join(KAFKA_DIR, "pom.xml"), "utf8");
  const version = pom.match(/<kafka\.version>([^<]+)<\/kafka\.version>/)?.[1];
  if (!version) throw new Error("kafka: infra/kafka/pom.xml names no <kafka.version>");
  return version;
})();

/**
 * Application class data sharing: the classes a broker loads while it starts, parsed and
 * verified once and kept in one file that every Kafka JVM of this checkout maps instead of
 * reading them from the jars again. A broker's start took 3.5-4.3 s of CPU on 2 cores,
 * 2.2-2.5 s with it, and 1.2 s as a short-lived broker (SHORT_LIVED_JVM); the suite starts
 * some fifty (issue 55). `npm run setup` writes it (ensureClassArchive); without it every
 * JVM starts as before, and a JVM that cannot use it (another JDK) warns and does without.
 */
const CLASS_ARCHIVE = join(WORK, `classes-${KAFKA_VERSION}.jsa`);
const sharedClasses = () =>
  existsSync(CLASS_ARCHIVE) ? [`-XX:SharedArchiveFile=${CLASS_ARCHIVE}`] : [];

/**
 * The JVM of a broker that lives for one test or one experiment and carries a light load:
 * the quick compiler only, and the serial collector (one thread). Its start takes half the
 * CPU of a long-lived broker's, which keeps the full compiler and G1 for a day of orders
 * and for the benchmarks.
 */
export const SHORT_LIVED_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/**
 * Writes the class archive once (CLASS_ARCHIVE): a short-lived broker started on free ports
 * with -XX:ArchiveClassesAtExit, stopped with SIGTERM (the JVM writes the archive as it
 * exits), then deleted. About 5 s, once per checkout and Kafka version.
 */
export async function ensureClassArchive(log: Log): Promise<void> {
  if (existsSync(CLASS_ARCHIVE)) {
    // Compiled here too (once; 1-2 s), before any test starts a node that needs it.
    if (jarsPresent()) launcherClasses(log);
    return;
  }
  ensureJars(log);
  launcherClasses(log);
  const instance = `class-archive-${process.pid}`;
  const partial = `${CLASS_ARCHIVE}.${process.pid}`;
  const port = await twoFreePorts();
  const quiet = () => {};
  log("kafka: writing the brokers' class archive (once: their starts then take half the CPU)");
  try {
    await startKafka(
      { brokers: [`127.0.0.1:${port}`], host: "127.0.0.1", port, controllerPort: port + 1 },
      quiet,
      { instance, jvm: [...SHORT_LIVED_JVM, `-XX:ArchiveClassesAtExit=${partial}`], oneJvm: false },
    );
    await stopKafka(quiet, { instance });
    // Renamed whole: a JVM never maps an archive still being written.
    if (existsSync(partial)) renameSync(partial, CLASS_ARCHIVE);
    else log("kafka: the JVM wrote no class archive; brokers start without one");
  } finally {
    await stopKafka(quiet, { instance, signal: "SIGKILL" });
    deleteInstance(instance);
    rmSync(partial, { force: true });
  }
}

/**
 * Runs one of Kafka's Java tools (ProducerPerformance, ConsumerPerformance...) to its end.
 * It fetches the jars first when this checkout has none: the Kafka it talks to may be one
 * this checkout did not start (Docker's, say), which brought no jars here.
 */
export function runKafkaTool(className: string, args: string[], log: Log = () => {}) {
  ensureJars(log);
  return spawnSync("java", toolArgs(["-Xmx512m"], className, args), {
    encoding: "utf8",
    timeout: 300_000,
  });
}

/** The JVM's arguments for one of Kafka's tools: its heap, the jars' log settings and classpath. */
const toolArgs = (jvm: string[], className: string, args: string[]) => [
  ...jvm,
  KAFKA_LOG4J,
  "-cp",
  KAFKA_CLASSPATH,
  className,
  ...args,
];

/**
 * The KRaft active controller's node id, from the quorum itself (kafka-metadata-quorum's
 * LeaderId): in KRaft, a client's metadata names a random broker as "controller". Run
 * without blocking, so that clients in the same process go on being answered meanwhile.
 */
export async function activeController(brokers: string): Promise<number> {
  const stdout = await kafkaTool("org.apache.kafka.tools.MetadataQuorumCommand", [
    "--bootstrap-server",
    brokers,
    "describe",
    "--status",
  ]);
  const id = Number(stdout.match(/LeaderId:\s+(\d+)/)?.[1]);
  if (!Number.isInteger(id)) throw new Error(`no LeaderId in:\n${stdout}`);
  return id;
}

/** One of Kafka's Java tools run without blocking this process's clients. */
async function kafkaTool(className: string, args: string[]): Promise<string> {
  const jvm = [...sharedClasses(), ...SHORT_LIVED_JVM, "-Xmx256m"];
  const { stdout } = await promisify(execFile)("java", toolArgs(jvm, className, args), {
    encoding: "utf8",
    timeout: 60_000,
  });
  return stdout;
}

/**
 * Moves the leadership of `topic[partition]` to node `to`, a live replica, and no data: its
 * replicas reordered with `to` first (the preferred leader), then a preferred-leader
 * election. What a rolling restart or Kafka's own leader rebalance does to a partition
 * while every node stays up: for __consumer_offsets, the group coordinator moves to `to`.
 */
export async function moveLeader(
  brokers: string,
  topic: string,
  partition: number,
  replicas: number[],
  to: number,
): Promise<void> {
  if (!replicas.includes(to)) throw new Error(`node ${to} is no replica of ${topic}[${partition}]`);
  const order = [to, ...replicas.filter((r) => r !== to)];
  const file = join(WORK, `move-${topic}-${partition}-${process.pid}.json`);
  mkdirSync(WORK, { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({ version: 1, partitions: [{ topic, partition, replicas: order }] }),
  );
  try {
    const at = ["--bootstrap-server", brokers];
    await kafkaTool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", [
      ...at,
      "--reassignment-json-file",
      file,
      "--execute",
    ]);
    await kafkaTool("org.apache.kafka.tools.LeaderElectionCommand", [
      ...at,
      "--election-type",
      "PREFERRED",
      "--topic",
      topic,
      "--partition",
      String(partition),
    ]);
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * A SASL_SSL listener beside the plaintext one, as a managed cluster offers: TLS with the
 * PKCS#12 keystore given, and SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for each user
 * (the SCRAM credentials are written into the storage when it is formatted).
 */
export interface SecureListener {
  port: number;
  keystoreFile: string;
  keystorePassword: string;
  users: { name: string; password: string }[];
}

/**
 * `advertisedPort`: the port clients are told to connect to, when it is not the one the
 * broker listens on (a test's TCP proxy in front of the broker). `secure`: a SASL_SSL
 * listener too.
 */
type KafkaSettings = Omit<InfraConfig["kafka"], "cluster"> & {
  advertisedPort?: number;
  secure?: SecureListener;
};

/** The properties of a SASL_SSL listener named SASL_SSL. */
function secureProperties(s: SecureListener): string {
  const plainUsers = s.users.map((u) => `user_${u.name}="${u.password}"`).join(" ");
  const scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
  return `sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${scram}
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${scram}
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=${s.keystoreFile}
listener.name.sasl_ssl.ssl.keystore.password=${s.keystorePassword}
listener.name.sasl_ssl.ssl.key.password=${s.keystorePassword}
`;
}

export async function kafkaAnswers(kafka: KafkaSettings, timeoutMs = 3000): Promise<boolean> {
  const admin = new Kafka({
    clientId: "infra-probe",
    brokers: kafka.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 1000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 && cluster.controller !== null;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** True when the jars are those of the version pom.xml names (not an older checkout's). */
export function jarsPresent(): boolean {
  return existsSync(join(KAFKA_LIB, `kafka_2.13-${KAFKA_VERSION}.jar`));
}

/**
 * The first run downloads the jars; later runs copy them from Maven's local cache. Jars of
 * another version (a checkout from before an upgrade) are removed first: two versions on
 * one classpath would mix their classes.
 */
export function ensureJars(log: Log): void {
  if (jarsPresent()) return;
  if (existsSync(KAFKA_LIB) && readdirSync(KAFKA_LIB).some((f) => f.endsWith(".jar"))) {
    log(`kafka: replacing the jars in ${KAFKA_LIB} with Apache Kafka ${KAFKA_VERSION}'s`);
    rmSync(KAFKA_LIB, { recursive: true, force: true });
  }
  log(
    `kafka: fetching the Apache Kafka ${KAFKA_VERSION} jars from Maven Central (first run only)...`,
  );
  const result = spawnSync(
    "mvn",
    [
      "-q",
      "-B",
      "-f",
      join(KAFKA_DIR, "pom.xml"),
      "dependency:copy-dependencies",
      `-DoutputDirectory=${KAFKA_LIB}`,
      "-DincludeScope=runtime",
    ],
    { stdio: "inherit" },
  );
  if (result.error) throw new Error(`kafka: cannot run Maven (mvn): ${result.error.message}`);
  if (result.status !== 0 || !jarsPresent()) {
    throw new Error(`kafka: Maven could not fetch the Kafka jars (exit ${result.status})`);
  }
}

/**
 * A node of a cluster: its id, and the whole controller quorum (`id@host:port,...`). A
 * cluster of three replicates each partition three times and acknowledges a write
 * (acks=all) once two replicas have it.
 */
interface ClusterRole {
  nodeId: number;
  voters: string;
  replicas: number;
  /** A node of a cluster with dedicated controllers is one or the other; combined, both. */
  roles: "broker" | "controller" | "broker,controller";
}

/**
 * Where a node notes that its storage was formatted as a dynamic KRaft quorum (KIP-853):
 * `controller.quorum.bootstrap.servers`, the voters in the metadata log. Storage formatted
 * before (Kafka 3.9, a static quorum) has no such note and keeps `controller.quorum.voters`,
 * which Kafka 4 still reads, so an upgraded checkout keeps its topics.
 */
const dynamicQuorumNote = (p: Paths) => join(p.dir, "dynamic-quorum");

export function quorumProperty(p: Paths, voters: string): string {
  const formatted = existsSync(join(p.data, "meta.properties"));
  if (formatted && !existsSync(dynamicQuorumNote(p))) return `controller.quorum.voters=${voters}`;
  const bootstrap = voters
    .split(",")
    .map((v) => v.slice(v.indexOf("@") + 1))
    .join(",");
  return `controller.quorum.bootstrap.servers=${bootstrap}`;
}

/**
 * A cluster's failover settings (docs/decisions.md, "Failover"). Kafka fences a broker that
 * stopped heartbeating only after broker.session.timeout.ms (9 s by default), and until then
 * the controller keeps a dead node as the leader of its partitions: writes to them wait. At
 * 2.5 s with a heartbeat every 250 ms, a dead broker's partitions move within the spec's 5 s
 * confirmation wait (2.5-3.6 s measured). The controllers are processes of their own, so
 * that a broker's death never costs an election too (in combined mode, the successor of a
 * controller that was also a broker gave every broker a full session first: 3.1-5.8 s).
 * The cost: a broker silent for longer than 2.5 s (a long GC pause, a stopped process) is
 * fenced and its partitions move; a 2 s pause is not (the SIGSTOP fault scenario), and 2 s
 * sessions fenced it.
 */
/** broker.session.timeout.ms of the shop's brokers: a silent one is fenced after this. */
export const BROKER_SESSION_MS = 2_500;

export const clusterFailover = `# Failover within the spec's 5 s wait (docs/decisions.md, "Failover"): a silent broker
# is fenced after 2.5 s, not 9 s, and a silent controller is replaced after 1 s, not 2 s
# (its successor then gives every broker a full session before fencing a dead one).
broker.session.timeout.ms=${BROKER_SESSION_MS}
broker.heartbeat.interval.ms=250
# Idle, the active controller's no-op record every 5 s, not 0.5 s (KIP-835: it lets the
# other nodes see a live controller; what fences a dead one is the quorum's fetch timeout
# below): a cluster of six idle JVMs took 14.7 s of CPU a minute, 12.9 s so.
metadata.max.idle.interval.ms=5000
controller.quorum.fetch.timeout.ms=1000
controller.quorum.election.backoff.max.ms=500
`;

/**
 * A single node's session. Killed (-9) and started again, the node's broker cannot register
 * until its old registration's session has ended, and its controller (the same process,
 * started again) counts that session from its own start: with Kafka's 9 s default the node
 * answered 12-13 s after its start, 3-4 s after a clean stop. The cluster's 2.5 s session
 * (above) brings that down; a single node has no one to fence it but itself, so the cost is
 * only that a pause of its whole process past 2.5 s (a GC pause) ends with a moment fenced.
 *
 * Its heartbeat every second, not every 250 ms as a cluster's (where it is what fences a
 * dead node in time), and its controller's no-op record every 5 s, not 0.5 s (KIP-835: it
 * lets other nodes see a live controller; a single node has none): idle, a broker took
 * 1.1-1.2 s of CPU each 30 s, and 0.6 s so (issue 55; the suite runs some fifty).
 */
export const singleNodeSession = `# Back within seconds after a kill -9, not after Kafka's 9 s session (infra/kafka/kafka.ts).
broker.session.timeout.ms=${BROKER_SESSION_MS}
broker.heartbeat.interval.ms=1000
# Idle, a single node's own quorum needs no no-op record every 0.5 s (infra/kafka/kafka.ts).
metadata.max.idle.interval.ms=5000
`;

/**
 * How many partitions the group coordinator's and the transaction coordinator's topics
 * have. A broker started again loads each of its __consumer_offsets partitions before it
 * can coordinate a group in it; on a single node the loads queue for the coordinator's
 * threads, and a group waits for its own partition's turn. Killed and started again under
 * four busy cores, a single node with 10 partitions loaded its slowest in 128-221 ms, nearly
 * all of it waiting its turn, and a consumer's group was joined 135-433 ms after the broker
 * answered; with 1 partition, 36-120 ms and 71-272 ms (3 rounds each, twice, on
 * 2026-12-02). Under the suite's load the same wait had read 2.6-3.3 s, the "Kafka killed"
 * rows' time to resume (issue 55). A cluster keeps 10: the groups spread over its nodes,
 * which its coordinator fault rows need. Kafka reads the count from the topic once it
 * exists, so a broker formatted with another count keeps working.
 */
function internalPartitions(replicas: number): string {
  const n = replicas >= 3 ? 10 : 1;
  return `offsets.topic.num.partitions=${n}\ntransaction.state.log.num.partitions=${n}\n`;
}

function serverProperties(kafka: KafkaSettings, p: Paths, role?: ClusterRole): string {
  const voters = role?.voters ?? `1@${kafka.host}:${kafka.controllerPort}`;
  const replicas = role?.replicas ?? 1;
  const minInsync = replicas >= 3 ? 2 : 1;
  const roles = role?.roles ?? "broker,controller";
  if (roles === "controller")
    return `# Written by infra/kafka/kafka.ts at every start; edit that file, not this one.
# A dedicated KRaft controller: the cluster's metadata quorum, no partitions, no clients.
process.roles=controller
node.id=${role?.nodeId}
${quorumProperty(p, voters)}
listeners=CONTROLLER://${kafka.host}:${kafka.controllerPort}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT
log.dirs=${p.data}
${clusterFailover}`;
  const { secure } = kafka;
  return `# Written by infra/kafka/kafka.ts at every start; edit that file, not this one.
process.roles=${roles}
node.id=${role?.nodeId ?? 1}
${quorumProperty(p, voters)}
listeners=PLAINTEXT://${kafka.host}:${kafka.port}${roles === "broker" ? "" : `,CONTROLLER://${kafka.host}:${kafka.controllerPort}`}${secure ? `,SASL_SSL://${kafka.host}:${secure.port}` : ""}
advertised.listeners=PLAINTEXT://${kafka.host}:${kafka.advertisedPort ?? kafka.port}${secure ? `,SASL_SSL://${kafka.host}:${secure.port}` : ""}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${secure ? ",SASL_SSL:SASL_SSL" : ""}
${secure ? secureProperties(secure) : ""}
log.dirs=${p.data}
num.partitions=3
default.replication.factor=${replicas}
min.insync.replicas=${minInsync}
# A single node: the internal topics can only have one replica; a cluster: three.
offsets.topic.replication.factor=${replicas}
${internalPartitions(replicas)}transaction.state.log.replication.factor=${replicas}
transaction.state.log.min.isr=${minInsync}
# Tests and demos join groups often: do not wait before the first rebalance.
group.initial.rebalance.delay.ms=0
${replicas >= 3 ? clusterFailover : singleNodeSession}auto.create.topics.enable=true
delete.topic.enable=true
log.retention.hours=168
`;
}

function readPid(p: Paths): number | null {
  if (!existsSync(p.pid)) return null;
  const pid = Number(readFileSync(p.pid, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** True when pid is alive and is the broker we started (not a recycled pid). */
function isOurBroker(pid: number, p: Paths): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return cmdline.includes("kafka.Kafka") && cmdline.includes(p.conf);
  } catch {
    return false;
  }
}

/**
 * What the broker logged since byte `from`: its ERROR and FATAL lines first (a broker that
 * fails to start logs the cause once, then pages of orderly shutdown), then the last lines.
 */
export function kafkaLogTail(p: Paths, from = 0, lines = 15): string {
  if (!existsSync(p.log)) return "(no log)";
  const all = readFileSync(p.log).subarray(from).toString("utf8").split("\n");
  const errors = all.filter((l) => /\] (ERROR|FATAL) /.test(l)).slice(0, 10);
  const tail = all.slice(-lines).join("\n");
  return errors.length > 0 ? `${errors.join("\n")}\n...\n${tail}` : tail;
}

/** A Kafka cluster id: 16 random bytes in URL-safe base64, never starting with "-". */
function newClusterId(): string {
  // One that starts with "-" would be read by StorageTool's argument parser as an option.
  let clusterId = randomBytes(16).toString("base64url");
  while (clusterId.startsWith("-")) clusterId = randomBytes(16).toString("base64url");
  return clusterId;
}

/**
 * StorageTool's arguments to format a node's storage, as a dynamic quorum: `--standalone`
 * for a single node (it is the one voter), or the whole cluster's `--initial-controllers`
 * (`id@host:port:dir-id`, the same on every node), with the node's dynamic-quorum note
 * written. Null when the storage is formatted already. The format itself runs in the
 * node's own JVM (spawnBroker).
 */
function formatArguments(
  p: Paths,
  log: Log,
  quorum: string[],
  clusterId = newClusterId(),
  secure?: SecureListener,
): string[] | null {
  if (existsSync(join(p.data, "meta.properties"))) return null;
  log(`kafka: formatting storage in ${p.data} (cluster ${clusterId})`);
  // SCRAM credentials live in the cluster's metadata: written at format time (KIP-900).
  const scram = (secure?.users ?? []).flatMap((u) =>
    ["SCRAM-SHA-256", "SCRAM-SHA-512"].flatMap((m) => [
      "--add-scram",
      `${m}=[name=${u.name},password=${u.password}]`,
    ]),
  );
  writeFileSync(dynamicQuorumNote(p), `${quorum.join(" ")}\n`);
  return ["format", "-t", clusterId, "-c", p.conf, ...quorum, ...scram];
}

/** Formats in a JVM of its own (StorageTool), where the launcher cannot be compiled. */
function formatApart(format: string[]): void {
  const result = spawnSync(
    "java",
    [
      ...sharedClasses(),
      ...SHORT_LIVED_JVM,
      "-cp",
      KAFKA_CLASSPATH,
      "kafka.tools.StorageTool",
      ...format,
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0) {
    throw new Error(`kafka: storage format failed:\n${result.stdout}\n${result.stderr}`);
  }
}

const LAUNCHER_SOURCE = join(KAFKA_DIR, "FormatThenStart.java");
const LAUNCHER_DIR = join(WORK, "launcher");

/**
 * The directory of FormatThenStart's class (infra/kafka/FormatThenStart.java: a node's
 * format and start in one JVM), compiled with javac the first time; null where there is no
 * javac or it fails: the format then runs in a JVM of its own first, as it always did.
 */
function launcherClasses(log: Log): string | null {
  const compiled = join(LAUNCHER_DIR, "FormatThenStart.class");
  if (existsSync(compiled) && statSync(compiled).mtimeMs >= statSync(LAUNCHER_SOURCE).mtimeMs)
    return LAUNCHER_DIR;
  const partial = `${LAUNCHER_DIR}.${process.pid}`;
  const result = spawnSync("javac", ["-cp", KAFKA_CLASSPATH, "-d", partial, LAUNCHER_SOURCE], {
    encoding: "utf8",
  });
  if (result.status !== 0) {
    log(
      `kafka: javac could not compile ${LAUNCHER_SOURCE} (${result.error?.message ?? result.stderr.trim()}); a node's storage is formatted in a JVM of its own`,
    );
    rmSync(partial, { recursive: true, force: true });
    return null;
  }
  // Renamed whole: another process never runs a class still being written.
  rmSync(LAUNCHER_DIR, { recursive: true, force: true });
  try {
    renameSync(partial, LAUNCHER_DIR);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another process renamed its own first
  }
  return LAUNCHER_DIR;
}

export interface StartResult {
  reused: boolean;
  ms: number;
}

/**
 * Idempotent: reuses a broker that already answers; otherwise formats storage once,
 * starts the broker in the background and waits until it answers.
 */
export async function startKafka(
  kafka: KafkaSettings,
  log: Log,
  {
    instance = "default",
    timeoutMs = 90_000,
    jvm,
    oneJvm = true,
  }: {
    instance?: string;
    timeoutMs?: number;
    /**
     * More JVM flags (SHORT_LIVED_JVM for a test's or an experiment's own broker). Left out,
     * a named instance's last ones (startFlags): the lab's "Iniciar o Kafka" starts a test's
     * short-lived broker short-lived again.
     */
    jvm?: string[];
    /**
     * false: the storage formatted in a JVM of its own first, as ensureClassArchive needs
     * (an archive written with the launcher on the classpath would not serve the tools).
     */
    oneJvm?: boolean;
  } = {},
): Promise<StartResult> {
  const started = Date.now();
  const p = paths(instance);
  if (await kafkaAnswers(kafka)) {
    log(`kafka: reusing the broker that answers on ${kafka.brokers.join(",")}`);
    return { reused: true, ms: Date.now() - started };
  }
  if (await portOpen(kafka.host, kafka.port)) {
    // Something listens there: a broker that is slow to answer (a busy machine), not a
    // reason to start a second one on the same port.
    log(`kafka: ${kafka.host}:${kafka.port} is open but did not answer yet; waiting for it`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (await kafkaAnswers(kafka, 5000)) return { reused: true, ms: Date.now() - started };
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(
      `kafka: something listens on ${kafka.host}:${kafka.port} but does not answer as Kafka`,
    );
  }
  const existing = readPid(p);
  if (existing !== null && isOurBroker(existing, p)) {
    log(`kafka: our broker (pid ${existing}) is running but not answering yet; waiting`);
    await waitUntilAnswers(kafka, existing, p, started + timeoutMs, 0);
    return { reused: true, ms: Date.now() - started };
  }
  ensureJars(log);
  mkdirSync(p.data, { recursive: true });
  writeFileSync(p.conf, serverProperties(kafka, p));
  const format = formatArguments(p, log, ["--standalone"], undefined, kafka.secure);
  const { pid, logFrom } = spawnBroker(p, log, {
    jvm: startFlags(p, jvm, instance === "default"),
    format,
    oneJvm,
  });
  await waitUntilAnswers(kafka, pid, p, started + timeoutMs, logFrom);
  log(`kafka: answering on ${kafka.brokers.join(",")} after ${Date.now() - started} ms`);
  return { reused: false, ms: Date.now() - started };
}

/** Where a node notes the JVM flags it was started with (spawnBroker), for its next start. */
const jvmNote = (p: Paths) => join(p.dir, "jvm-flags");

/**
 * The JVM flags a node starts with: the ones given, or else its last ones (the note
 * spawnBroker writes), except for the checkout's own broker or cluster (`own`), which always
 * starts with the full JVM: the tests' short-lived use of it must not carry over to npm start
 * or the benchmarks. So a test's or an experiment's broker that the lab killed and starts
 * again keeps its JVM: a test's short-lived broker started with the full compiler and G1 took
 * 14 s to answer under the suite's load, and its compilers slowed the shop after (2026-11-29).
 */
function startFlags(p: Paths, given: string[] | undefined, own: boolean): string[] {
  if (given) return given;
  if (own || !existsSync(jvmNote(p))) return [];
  return readFileSync(jvmNote(p), "utf8").split("\n").filter(Boolean);
}

/**
 * Starts one broker JVM in the background, its output appended to its log. Given `format`
 * (formatArguments), the same JVM formats the storage first (FormatThenStart).
 */
function spawnBroker(
  p: Paths,
  log: Log,
  {
    heap = ["-Xms256m", "-Xmx1g"],
    jvm = [],
    format = null,
    oneJvm = true,
  }: { heap?: string[]; jvm?: string[]; format?: string[] | null; oneJvm?: boolean } = {},
): { pid: number; logFrom: number } {
  const launcher = format && oneJvm ? launcherClasses(log) : null;
  if (format && !launcher) formatApart(format);
  // The launcher's directory after the jars: the class archive's classpath stays a prefix.
  const main =
    format && launcher
      ? ["-cp", `${KAFKA_CLASSPATH}:${launcher}`, "FormatThenStart", ...format, "kafka.Kafka"]
      : ["-cp", KAFKA_CLASSPATH, "kafka.Kafka"];
  writeFileSync(jvmNote(p), `${jvm.join("\n")}\n`);
  const logFrom = existsSync(p.log) ? statSync(p.log).size : 0;
  const out = openSync(p.log, "a");
  const child = spawn(
    "java",
    [
      ...heap,
      ...sharedClasses(),
      // A short-lived broker's collector, when given, instead of G1.
      ...(jvm.some((f) => f.endsWith("GC")) ? [] : ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"]),
      ...jvm,
      "-Djava.awt.headless=true",
      KAFKA_LOG4J,
      ...main,
      p.conf,
    ],
    { detached: true, stdio: ["ignore", out, out] },
  );
  child.unref();
  if (child.pid === undefined) throw new Error("kafka: the JVM did not start (is java installed?)");
  writeFileSync(p.pid, String(child.pid));
  log(`kafka: started pid ${child.pid}, log in ${p.log}`);
  return { pid: child.pid, logFrom };
}

async function waitUntilAnswers(
  kafka: KafkaSettings,
  pid: number,
  p: Paths,
  deadline: number,
  logFrom: number,
) {
  while (Date.now() < deadline) {
    if (!isOurBroker(pid, p)) {
      throw new Error(
        `kafka: the broker exited during start-up (log: ${p.log}):\n${kafkaLogTail(p, logFrom)}`,
      );
    }
    if (await kafkaAnswers(kafka, 2000)) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(
    `kafka: no answer on ${kafka.brokers.join(",")} in time:\n${kafkaLogTail(p, logFrom)}`,
  );
}

/** Stops the broker this script started, and nothing else. */
export async function stopKafka(
  log: Log,
  { instance = "default", signal = "SIGTERM" as "SIGTERM" | "SIGKILL" } = {},
) {
  const p = paths(instance);
  const pid = readPid(p);
  if (pid === null || !isOurBroker(pid, p)) {
    log("kafka: no broker started by infra is running; nothing to stop");
    if (pid !== null) rmSync(p.pid, { force: true });
    return { stopped: false };
  }
  process.kill(pid, signal);
  const deadline = Date.now() + 30_000;
  while (isOurBroker(pid, p) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isOurBroker(pid, p)) {
    log(`kafka: pid ${pid} did not stop in 30 s; killing it`);
    process.kill(pid, "SIGKILL");
    while (isOurBroker(pid, p)) await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(p.pid, { force: true });
  log(`kafka: stopped pid ${pid}${signal === "SIGKILL" ? " (killed)" : ""}`);
  return { stopped: true };
}

/**
 * The PLAINTEXT port of the broker this checkout's infra runs as `instance`, read from the
 * server.properties it wrote; null when none runs.
 */
export function portStartedByInfra(instance = "default"): number | null {
  const p = paths(instance);
  const pid = readPid(p);
  if (pid === null || !isOurBroker(pid, p)) return null;
  const port = /^listeners=PLAINTEXT:\/\/[^:]+:(\d+)/m.exec(readFileSync(p.conf, "utf8"))?.[1];
  return port === undefined ? null : Number(port);
}

export function kafkaStartedByInfra(instance = "default"): boolean {
  const p = paths(instance);
  const pid = readPid(p);
  return pid !== null && isOurBroker(pid, p);
}

/** Deletes a named broker's folder (data, config, log): a test's own broker, once stopped. */
export function deleteInstance(instance: string): void {
  if (instance === "default")
    throw new Error("kafka: the default broker's folder is not a test's to delete");
  rmSync(paths(instance).dir, { recursive: true, force: true });
}

/** The nodes of a cluster on one machine: each its own listener and controller port. */
export interface ClusterSettings {
  host: string;
  nodes: { port: number; controllerPort: number }[];
}

/**
 * The node ids of a cluster's dedicated controllers start after this one: controller i
 * (1-based) is node 100 + i, on node i's controllerPort; broker i is node i, on its port.
 */
export const CONTROLLER_IDS = 100;

/** The instance (folder) name of node `id` of a cluster: broker i, or controller 100 + i. */
export const clusterNode = (name: string, id: number) =>
  id > CONTROLLER_IDS ? `${name}-controller-${id - CONTROLLER_IDS}` : `${name}-${id}`;

/** The node ids of a cluster of `size`: its brokers, then its dedicated controllers. */
export const clusterNodeIds = (size: number) => [
  ...Array.from({ length: size }, (_, i) => i + 1),
  ...Array.from({ length: size }, (_, i) => CONTROLLER_IDS + i + 1),
];

/**
 * A cluster whose storage was formatted before its controllers were dedicated (combined
 * nodes, each broker and controller): its nodes keep that layout, and its topics.
 */
function formattedCombined(name: string): boolean {
  return (
    existsSync(join(paths(clusterNode(name, 1)).data, "meta.properties")) &&
    !existsSync(paths(clusterNode(name, CONTROLLER_IDS + 1)).dir)
  );
}

/**
 * True when every node of the cluster listens and the cluster counts all of its brokers.
 * Each address is asked itself first: the cluster's metadata still lists a broker killed a
 * moment ago (until its session times out), and lists it for good while the controller
 * quorum has lost its majority, so a count alone would call a cluster with two dead nodes
 * complete; a dead controller appears in no broker count at all.
 */
async function clusterComplete(
  brokers: string[],
  controllers: string[],
  size: number,
): Promise<boolean> {
  for (const b of [...brokers, ...controllers]) {
    const [host, port] = b.split(":") as [string, string];
    if (!(await portOpen(host, Number(port)))) return false;
  }
  const admin = new Kafka({
    clientId: "infra-probe",
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.length === size;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * A KRaft cluster on this machine, from the same jars, each node in its own folder
 * (`.work/<name>-<i>/`, `.work/<name>-controller-<i>/`), one cluster id: as many brokers as
 * `settings.nodes` (ids 1..n) and as many dedicated controllers (ids 101..100+n, the
 * metadata quorum), so that a controller's death moves no partition and a broker's is
 * fenced by a controller that is alive (docs/decisions.md, "Failover"). A cluster formatted
 * with combined nodes keeps them. Replication factor 3 and min.insync.replicas 2 for a
 * cluster of three. Idempotent: a cluster that already answers complete is reused, and the
 * nodes that are down in one that does not are started.
 */
export async function startKafkaCluster(
  settings: ClusterSettings,
  log: Log,
  {
    name = "cluster",
    timeoutMs = 120_000,
    jvm,
  }: {
    name?: string;
    timeoutMs?: number;
    /**
     * More JVM flags for every node (SHORT_LIVED_JVM for a test's or an experiment's own);
     * left out, each node's last ones (startFlags).
     */
    jvm?: string[];
  } = {},
): Promise<StartResult & { brokers: string[] }> {
  const started = Date.now();
  const { host, nodes } = settings;
  const brokers = nodes.map((n) => `${host}:${n.port}`);
  const combined = formattedCombined(name);
  const controllers = combined ? [] : nodes.map((n) => `${host}:${n.controllerPort}`);
  if (await clusterComplete(brokers, controllers, nodes.length)) {
    log(`kafka: reusing the cluster that answers on ${brokers.join(",")}`);
    return { reused: true, ms: Date.now() - started, brokers };
  }
  ensureJars(log);
  if (combined)
    log(
      `kafka: the cluster in ${folderOf(name)}/${name}-* was formatted with nodes that are broker and controller both; kept so (for dedicated controllers, stop it and delete those folders)`,
    );
  const controllerId = (i: number) => (combined ? i + 1 : CONTROLLER_IDS + i + 1);
  const voters = nodes.map((n, i) => `${controllerId(i)}@${host}:${n.controllerPort}`).join(",");
  const idFile = join(folderOf(name), `${name}.cluster-id`);
  mkdirSync(folderOf(name), { recursive: true });
  if (!existsSync(idFile)) writeFileSync(idFile, newClusterId());
  const clusterId = readFileSync(idFile, "utf8").trim();
  // Each controller's directory id, the same list on every controller formatted in this start.
  const initialControllers = nodes
    .map((n, i) => `${controllerId(i)}@${host}:${n.controllerPort}:${newClusterId()}`)
    .join(",");
  // The quorum first, then the brokers that register with it.
  const wanted = [
    ...(combined
      ? []
      : nodes.map((n, i) => ({ id: controllerId(i), roles: "controller" as const, ...n }))),
    ...nodes.map((n, i) => ({
      id: i + 1,
      roles: combined ? ("broker,controller" as const) : ("broker" as const),
      ...n,
    })),
  ];
  const running: { pid: number; p: Paths; logFrom: number }[] = [];
  for (const node of wanted) {
    const p = paths(clusterNode(name, node.id));
    const pid = readPid(p);
    if (pid !== null && isOurBroker(pid, p)) {
      running.push({ pid, p, logFrom: 0 });
      continue;
    }
    const port = node.roles === "controller" ? node.controllerPort : node.port;
    if (await portOpen(host, port))
      throw new Error(
        `kafka: ${host}:${port}, node ${node.id} of the cluster, is taken (a single broker? npm run infra -- kafka stop)`,
      );
    mkdirSync(p.data, { recursive: true });
    const settingsOfNode = { brokers: [`${host}:${node.port}`], host, ...node };
    writeFileSync(
      p.conf,
      serverProperties(settingsOfNode, p, {
        nodeId: node.id,
        voters,
        replicas: nodes.length,
        roles: node.roles,
      }),
    );
    const quorum =
      node.roles === "broker"
        ? ["--no-initial-controllers"]
        : ["--initial-controllers", initialControllers];
    const format = formatArguments(p, log, quorum, clusterId);
    // A controller keeps the metadata log and nothing else: a quarter of a broker's heap,
    // and the quick compiler only (its start took 3.8-4.5 s of CPU, 2.2-2.6 s so; the
    // cluster answered after 13.7 s instead of 16.6 s on 2 cores).
    const controller = node.roles === "controller";
    const flags = startFlags(p, jvm, name === "cluster");
    running.push({
      ...spawnBroker(p, log, {
        format,
        ...(controller ? { heap: ["-Xms64m", "-Xmx256m"] } : {}),
        jvm: controller ? [...new Set(["-XX:TieredStopAtLevel=1", ...flags])] : flags,
      }),
      p,
    });
  }
  const deadline = started + timeoutMs;
  while (Date.now() < deadline) {
    const gone = running.find((r) => !isOurBroker(r.pid, r.p));
    if (gone)
      throw new Error(
        `kafka: a cluster node exited during start-up (log: ${gone.p.log}):\n${kafkaLogTail(gone.p, gone.logFrom)}`,
      );
    if (await clusterComplete(brokers, controllers, nodes.length)) {
      log(
        `kafka: cluster of ${nodes.length} brokers${combined ? "" : ` and ${nodes.length} controllers`} answering on ${brokers.join(",")} after ${Date.now() - started} ms`,
      );
      return { reused: false, ms: Date.now() - started, brokers };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`kafka: the cluster on ${brokers.join(",")} did not come up complete in time`);
}

/** The ids of a cluster's nodes whose folders exist: its brokers, and its controllers if any. */
function nodesOnDisk(name: string, size: number): number[] {
  return clusterNodeIds(size).filter((id) => existsSync(paths(clusterNode(name, id)).dir));
}

/** Stops (or, with SIGKILL, kills) every node of a cluster this script started. */
export async function stopKafkaCluster(
  log: Log,
  { name = "cluster", size = 3, signal = "SIGTERM" as "SIGTERM" | "SIGKILL" } = {},
) {
  // The brokers first: a broker stopping in order reports to a controller that is up.
  const ids = nodesOnDisk(name, size);
  const stop = (some: number[]) =>
    Promise.all(some.map((id) => stopKafka(log, { instance: clusterNode(name, id), signal })));
  await stop(ids.filter((id) => id <= CONTROLLER_IDS));
  await stop(ids.filter((id) => id > CONTROLLER_IDS));
}

/** Deletes a stopped cluster's folders and its cluster id: a test's own cluster. */
export function deleteCluster(name: string, size = 3): void {
  if (name === "cluster") throw new Error("kafka: the default cluster is not a test's to delete");
  for (const id of nodesOnDisk(name, size))
    rmSync(paths(clusterNode(name, id)).dir, { recursive: true, force: true });
  rmSync(join(folderOf(name), `${name}.cluster-id`), { force: true });
}
