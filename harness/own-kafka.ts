import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  activeController,
  clusterNode,
  clusterNodeIds,
  deleteCluster,
  deleteInstance,
  moveLeader,
  paths,
  type SecureListener,
  SHORT_LIVED_JVM,
  startKafka,
  startKafkaCluster,
  stopKafka,
  stopKafkaCluster,
} from "../infra/kafka/kafka.ts";
import { twoFreePorts } from "../infra/ports.ts";
import { runLogDir, step } from "./logs.ts";
import { TcpProxy } from "./tcp-proxy.ts";

/**
 * With SHOP_TEST_LOG_DIR (the fault suite), a broker's log is copied there before its folder
 * is deleted: the brokers' side of a run that failed or hung.
 */
function keepLog(instance: string): void {
  const log = paths(instance).log;
  const dir = existsSync(log) ? runLogDir() : null;
  if (!dir) return;
  copyFileSync(log, join(dir, `kafka-${instance}.log`));
}

/**
 * A Kafka broker of the test's own, on ports chosen free at run time and a data folder of
 * its own, that the test may stop, kill and restart without touching the broker every
 * other test uses. `dispose()` stops it and deletes its folder.
 */
export function ownKafka(
  name: string,
  {
    proxied = false,
    secure,
  }: {
    proxied?: boolean;
    /** A SASL_SSL listener too, with this keystore and these users (PLAIN and SCRAM). */
    secure?: Omit<SecureListener, "port">;
  } = {},
) {
  const instance = `${name}-${randomBytes(3).toString("hex")}`;
  let settings: {
    brokers: string[];
    host: string;
    port: number;
    controllerPort: number;
    advertisedPort?: number;
    secure?: SecureListener;
  } | null = null;
  let proxy: TcpProxy | null = null;
  const log = (line: string) => {
    step(instance, line);
    if (process.env.SHOP_TEST_LOGS) console.log(`[${instance}] ${line}`);
  };
  return {
    /** Its name among infra's brokers (stopKafka's and kafkaStartedByInfra's `instance`). */
    instance,
    /** Where it listens, as infra's settings; known once it has started. */
    get settings() {
      if (!settings) throw new Error(`ownKafka ${instance}: start it before reading its settings`);
      return settings;
    },
    /** Its bootstrap address; known once it has started. */
    get brokers(): string {
      if (!settings) throw new Error(`ownKafka ${instance}: start it before reading its address`);
      return settings.brokers.join(",");
    },
    /** With `secure`, the SASL_SSL listener's address; known once started. */
    get secureBrokers(): string {
      if (!settings?.secure) throw new Error(`ownKafka ${instance}: not secure, or not started`);
      return `127.0.0.1:${settings.secure.port}`;
    },
    /**
     * With `proxied`, the TCP proxy every client goes through (the broker advertises the
     * proxy's address), for a test to cut, hold or lose traffic; known once started.
     */
    get proxy(): TcpProxy {
      if (!proxy) throw new Error(`ownKafka ${instance}: not proxied, or not started`);
      return proxy;
    },
    async start() {
      if (!settings) {
        const port = await twoFreePorts();
        proxy = proxied ? await TcpProxy.start("127.0.0.1", port, undefined, "kafka") : null;
        const front = proxy?.port ?? port;
        settings = {
          brokers: [`127.0.0.1:${front}`],
          host: "127.0.0.1",
          port,
          controllerPort: port + 1,
          ...(proxy ? { advertisedPort: proxy.port } : {}),
          ...(secure ? { secure: { ...secure, port: await twoFreePorts() } } : {}),
        };
      }
      return startKafka(settings, log, { instance, jvm: SHORT_LIVED_JVM });
    },
    stop: () => stopKafka(log, { instance }),
    kill: () => stopKafka(log, { instance, signal: "SIGKILL" }),
    async dispose() {
      await stopKafka(log, { instance });
      await proxy?.close();
      keepLog(instance);
      deleteInstance(instance);
    },
  };
}

/**
 * A KRaft cluster of three brokers and three dedicated controllers of the test's own (ports
 * chosen free at run time, folders of its own): the test may kill and restart any node. `dispose()` stops it and deletes its folders.
 */
export function ownKafkaCluster(name: string) {
  const cluster = `${name}-${randomBytes(3).toString("hex")}`;
  let settings: { host: string; nodes: { port: number; controllerPort: number }[] } | null = null;
  const log = (line: string) => {
    step(cluster, line);
    if (process.env.SHOP_TEST_LOGS) console.log(`[${cluster}] ${line}`);
  };
  const known = () => {
    if (!settings) throw new Error(`ownKafkaCluster ${cluster}: start it first`);
    return settings;
  };
  return {
    /** Every node's address, for KAFKA_BROKERS. */
    get brokers(): string {
      const s = known();
      return s.nodes.map((n) => `${s.host}:${n.port}`).join(",");
    },
    async start() {
      if (!settings) {
        const nodes = [];
        for (let i = 0; i < 3; i++) {
          const port = await twoFreePorts();
          nodes.push({ port, controllerPort: port + 1 });
        }
        settings = { host: "127.0.0.1", nodes };
      }
      return startKafkaCluster(settings, log, { name: cluster, jvm: SHORT_LIVED_JVM });
    },
    /** kill -9 of node `id`: a broker (1..3) or a dedicated controller (101..103). */
    kill: (id: number) => stopKafka(log, { instance: clusterNode(cluster, id), signal: "SIGKILL" }),
    /** The JVMs' pids, of the nodes running now: brokers and controllers. */
    pids(): number[] {
      return clusterNodeIds(3).flatMap((i) => {
        const pid = this.pid(i);
        return pid === null ? [] : [pid];
      });
    },
    /** Node `id`'s JVM pid, as infra noted it at its start; null if it has none. */
    pid(id: number): number | null {
      const file = paths(clusterNode(cluster, id)).pid;
      return existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : null;
    },
    /** The KRaft active controller's node id (infra's activeController). */
    controller(): Promise<number> {
      return activeController(this.brokers);
    },
    /** Moves topic[partition]'s leadership to live node `to` (infra's moveLeader). */
    moveLeader(topic: string, partition: number, replicas: number[], to: number): Promise<void> {
      return moveLeader(this.brokers, topic, partition, replicas, to);
    },
    async dispose() {
      await stopKafkaCluster(log, { name: cluster });
      for (const id of clusterNodeIds(3)) keepLog(clusterNode(cluster, id));
      deleteCluster(cluster);
    },
  };
}
