import { loadDotEnv } from "@shop/service";
import { pageLab } from "../lab/src/page/start.ts";
import { ensureChromium } from "./browser.ts";
import { ensureEnvFile, type InfraConfig, type Log, readInfraConfig } from "./config.ts";
import {
  ensureClassArchive,
  ensureJars,
  kafkaAnswers,
  kafkaStartedByInfra,
  startKafka,
  startKafkaCluster,
  stopKafkaCluster,
} from "./kafka/kafka.ts";
import { kafkaUsers, stopKafkaUnlessUsed } from "./kafka/users.ts";
import { ensureCheckoutDatabase } from "./postgres.ts";
import { clusterAddresses, startUserCluster, userCluster } from "./rabbitmq/node.ts";
import { amqpAnswers, panelUrl, startRabbit, stopRabbit } from "./rabbitmq/rabbitmq.ts";
import { runServices, SHOPS, type Shop, withOrdersInstances } from "./services.ts";

/**
 * npm run infra -- <command>
 *   setup                       .env, the Kafka jars, RabbitMQ, PostgreSQL's database and the test browser (used by CI)
 *   postgres                    the orders API's database and user on PostgreSQL; prints DATABASE_URL
 *   up | down                   both brokers
 *   kafka start|stop|status     the Kafka broker alone; `kafka start --nodes 3` (or
 *                               KAFKA_NODES=3) a KRaft cluster of three brokers and three controllers instead
 *   rabbitmq start|stop|status  RabbitMQ alone; `rabbitmq start --nodes 3` (or
 *                               BROKER_CLUSTER_SIZE=3) a cluster of three beside it
 *   start | start:broker        brokers, then the services of one edition (npm start);
 *                               `start --instances 2` (or ORDERS_INSTANCES=2): two orders
 *                               APIs (8080, 8082) on the checkout's PostgreSQL database
 */
const log = (line: string) => console.log(line);

async function main(argv: string[]): Promise<number> {
  const instancesFlag = argv.indexOf("--instances");
  if (instancesFlag >= 0) {
    // `start --instances 2` is ORDERS_INSTANCES=2.
    process.env.ORDERS_INSTANCES = argv[instancesFlag + 1] ?? "";
    argv.splice(instancesFlag, 2);
  }
  const nodesFlag = argv.indexOf("--nodes");
  if (nodesFlag >= 0) {
    // `kafka start --nodes 3` is KAFKA_NODES=3, `rabbitmq start --nodes 3` BROKER_CLUSTER_SIZE=3.
    const setting = argv[0] === "rabbitmq" ? "BROKER_CLUSTER_SIZE" : "KAFKA_NODES";
    process.env[setting] = argv[nodesFlag + 1] ?? "";
    argv.splice(nodesFlag, 2);
  }
  const [command, sub] = argv;
  const env = ensureEnvFile();
  if (env.created) log(`setup: wrote ${env.path} with a generated broker password`);
  loadDotEnv();
  const config = readInfraConfig();
  const { cluster } = config.kafka;
  // The services this script starts get the whole cluster's addresses.
  if (cluster) process.env.KAFKA_BROKERS = config.kafka.brokers.join(",");
  const startKafkaNow = () =>
    cluster ? startKafkaCluster(cluster, log) : startKafka(config.kafka, log);
  const rabbitCluster = config.rabbit.clusterSize > 1;
  // The broker edition's services started here get every node of the cluster.
  if (rabbitCluster)
    Object.assign(process.env, clusterAddresses(userCluster(config.rabbit.clusterSize)));
  const startRabbitNow = () =>
    rabbitCluster ? startUserCluster(config.rabbit, log) : startRabbit(config.rabbit, log);

  switch (`${command ?? ""} ${sub ?? ""}`.trim()) {
    case "setup": {
      ensureJars(log);
      // The class archive's broker (5 s, its own JVM) starts and stops while the rest is set
      // up here: the browser's install, RabbitMQ's users, PostgreSQL's database.
      const classArchive = ensureClassArchive(log);
      classArchive.catch(() => {}); // awaited below, after the rest
      ensureChromium(log);
      await startRabbit(config.rabbit, log);
      try {
        await ensureCheckoutDatabase(log);
      } catch (error) {
        // The default store is SQLite: the shop runs without PostgreSQL.
        log((error as Error).message);
      }
      await classArchive;
      log("setup: done");
      return 0;
    }
    case "up":
    case "kafka start":
    case "rabbitmq start": {
      if (command !== "rabbitmq") {
        const k = await startKafkaNow();
        log(`kafka: ready in ${k.ms} ms (${k.reused ? "reused" : "started"})`);
      }
      if (command !== "kafka") {
        const r = await startRabbitNow();
        log(`rabbitmq: ready in ${r.ms} ms (${r.reused ? "reused" : "started"})`);
      }
      return 0;
    }
    case "down":
    case "kafka stop":
    case "rabbitmq stop": {
      if (command !== "rabbitmq") await stopKafkaHere(config.kafka, log);
      if (command !== "kafka") {
        await stopRabbit(log);
        await Promise.all(userCluster().map((n) => n.stop(log)));
      }
      return 0;
    }
    case "postgres": {
      await ensureCheckoutDatabase(log);
      return 0;
    }
    case "kafka status": {
      const up = await kafkaAnswers(config.kafka);
      log(
        `kafka: ${up ? "answering" : "not answering"} on ${config.kafka.brokers.join(",")}` +
          (kafkaStartedByInfra() ? " (started by infra)" : ""),
      );
      return up ? 0 : 1;
    }
    case "rabbitmq status": {
      const up = await amqpAnswers(config.rabbit.host, config.rabbit.port);
      log(
        `rabbitmq: ${up ? "answering" : "not answering"} on ${config.rabbit.host}:${config.rabbit.port}, panel ${panelUrl(config.rabbit)}`,
      );
      return up ? 0 : 1;
    }
    case "start":
    case "start:broker": {
      let shop: Shop = command === "start" ? SHOPS.eventLog : SHOPS.broker;
      const instances = ordersInstances();
      if (instances > 1 && command === "start") {
        // Several orders APIs are one shop only on a shared database.
        const url = process.env.DATABASE_URL ?? (await ensureCheckoutDatabase(log));
        shop = withOrdersInstances(shop, instances, url);
      }
      if (shop.needsKafka) {
        await startKafkaNow();
        // A test run that started this Kafka leaves it running while the shop uses it.
        if (!cluster) kafkaUsers(config.kafka).join();
      }
      await startRabbitNow();
      // The page's lab: only here, where this process owns what it starts.
      const lab = pageLab({ edition: command === "start" ? "eventos" : "broker", config, log });
      const code = await runServices(shop, config, log, lab);
      // Every process it started has exited; an action of the page's lab that was waiting on
      // one (a group to settle, say) would keep its timers, and npm start, alive for minutes.
      return process.exit(code);
    }
    default:
      console.error(
        `unknown command: ${argv.join(" ") || "(none)"}\n` +
          "use: setup | up | down | start | start:broker | postgres | kafka start|stop|status | rabbitmq start|stop|status",
      );
      return 2;
  }
}

/** ORDERS_INSTANCES: how many orders APIs `npm start` runs (1 to 4; 1 by default). */
function ordersInstances(): number {
  const text = process.env.ORDERS_INSTANCES ?? "1";
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 4)
    throw new Error(
      `ORDERS_INSTANCES (or --instances) must be a whole number from 1 to 4, not "${text}"`,
    );
  return n;
}

/**
 * Stops the Kafka this checkout's infra started (one broker and the cluster), unless a run
 * still uses it. A broker that answers but was not started here is named and left running.
 */
async function stopKafkaHere(kafka: InfraConfig["kafka"], log: Log): Promise<void> {
  const single = await stopKafkaUnlessUsed(kafka, log);
  if (single.inUse) return;
  await stopKafkaCluster(log);
  if (!single.stopped && (await kafkaAnswers(kafka)))
    log(
      `kafka: the broker answering on ${kafka.brokers.join(",")} was not started by this checkout's infra (another checkout's, Docker's or a person's): left running`,
    );
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
