import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { amqpUrl } from "@shop/amqp";
import { kafkaNames } from "@shop/contracts";
import { loadDotEnv } from "@shop/service";
import { deleteTopicsWhere } from "../../harness/kafka.ts";
import { ServiceProcess } from "../../harness/process.ts";
import {
  checkoutId,
  ensureEnvFile,
  type InfraConfig,
  readInfraConfig,
} from "../../infra/config.ts";
import { deleteInstance, SHORT_LIVED_JVM, startKafka, stopKafka } from "../../infra/kafka/kafka.ts";
import { kafkaUsers, stopKafkaUnlessUsed } from "../../infra/kafka/users.ts";
import { freePort, twoFreePorts } from "../../infra/ports.ts";
import { rabbitNode } from "../../infra/rabbitmq/node.ts";
import { scratchDir } from "../../infra/scratch.ts";
import type { Narrator } from "./narrator.ts";

/** How an experiment was asked to run: the orders service's port (0: any free one). */
export interface LabOptions {
  port: number;
}

/**
 * What one experiment starts, and stops again at its end: the brokers it had to start,
 * the services it runs as processes (each with its own database in a folder of its own),
 * under names of its own (topics, groups, vhost) so that it never mixes with a running shop.
 */
export class LabWorld {
  readonly config: InfraConfig;
  /** The topic and group prefix of this run's event-log services (KAFKA_PREFIXO). */
  readonly prefix: string;
  readonly dir: string;
  private readonly cleanups: (() => unknown)[] = [];

  constructor(
    readonly name: string,
    readonly say: Narrator,
    readonly options: LabOptions,
  ) {
    ensureEnvFile();
    loadDotEnv();
    this.config = readInfraConfig();
    // The checkout's id in it: a second checkout's lab or tests never take these for theirs.
    this.prefix = `lab-${name}-${checkoutId()}${randomBytes(2).toString("hex")}.`;
    this.dir = mkdtempSync(join(scratchDir(), `lab-${name}-`));
    this.atEnd(() => rmSync(this.dir, { recursive: true, force: true }));
  }

  /** The topics and groups of this run, by the spec's names. */
  get names() {
    return kafkaNames(this.prefix);
  }

  /** Something to undo when the experiment ends, however it ends (last in, first out). */
  atEnd(undo: () => unknown): void {
    this.cleanups.push(undo);
  }

  /**
   * Runs every undo once, last in first out. Called twice at once (a Ctrl-C while the
   * experiment's own end is cleaning up), both wait for the one clean-up: before, the second
   * reversed the list under the first, and undos ran twice or not at all.
   */
  cleanUp(): Promise<void> {
    this.cleaning ??= (async () => {
      for (const undo of this.cleanups.splice(0).reverse()) {
        try {
          await undo();
        } catch (error) {
          this.say.saw(`(ao limpar: ${(error as Error).message})`);
        }
      }
    })();
    return this.cleaning;
  }
  private cleaning: Promise<void> | undefined;

  /** The shop's Kafka: the one that answers, or one started now and stopped at the end. */
  async kafka(): Promise<string> {
    const k = this.config.kafka;
    const r = await startKafka(k, () => {});
    const brokers = k.brokers.join(",");
    // Said, so that a test run or npm start elsewhere does not stop it under the lab.
    const using = kafkaUsers(k).join();
    this.atEnd(() => using.leave());
    if (r.reused) this.say.saw(`O Kafka responde em ${brokers}; usando esse.`);
    else {
      this.say.saw(
        `Kafka iniciado em ${brokers} (${(r.ms / 1000).toFixed(1)} s); parado no fim, a não ser que outra execução o use.`,
      );
      // Told in pt-BR from what it did (infra's own lines are English, as its logs are).
      this.atEnd(async () => {
        const r = await stopKafkaUnlessUsed(k, () => {});
        this.say.saw(
          r.stopped
            ? "O Kafka que o laboratório iniciou foi parado."
            : r.inUse
              ? "O Kafka segue rodando: outra execução o usa."
              : "O Kafka segue rodando: a infra deste checkout o roda em outra porta.",
        );
      });
    }
    // Its topics go with it (before a Kafka it started stops, after its services do).
    this.atEnd(() => deleteTopicsWhere(brokers, (t) => t.startsWith(this.prefix)));
    return brokers;
  }

  /**
   * A Kafka broker of the experiment's own (ports chosen free now, a data folder of its
   * own), for an experiment that stops it: the shop's Kafka, and whatever else uses it,
   * is never touched. Deleted at the end.
   */
  async ownKafka() {
    const instance = `lab-${this.name}-${randomBytes(3).toString("hex")}`;
    const port = await twoFreePorts();
    const settings = {
      brokers: [`127.0.0.1:${port}`],
      host: "127.0.0.1",
      port,
      controllerPort: port + 1,
    };
    const quiet = () => {};
    const start = async () =>
      (await startKafka(settings, quiet, { instance, jvm: SHORT_LIVED_JVM })).ms;
    this.atEnd(() => deleteInstance(instance));
    this.atEnd(() => stopKafka(quiet, { instance }));
    const ms = await start();
    this.say.saw(
      `Um broker Kafka só deste experimento iniciado em ${settings.brokers[0]} (${(ms / 1000).toFixed(1)} s)`,
    );
    return {
      brokers: settings.brokers.join(","),
      start,
      stop: () => stopKafka(quiet, { instance }),
    };
  }

  /**
   * A RabbitMQ node of the experiment's own (Debian's server under a node name of its own,
   * ports chosen free now, a data folder in this run's folder) with the shop's users on `/`:
   * an experiment may stop it without touching the machine's RabbitMQ. Removed at the end.
   */
  async ownRabbit() {
    const ports = { amqp: await freePort(), distribution: await freePort() };
    const name = `lab-${this.name}-${randomBytes(3).toString("hex")}`;
    // A folder of its own, outside this run's (which only root may enter): as root, the
    // node runs as the rabbitmq user, who is given this one.
    const node = rabbitNode(name, mkdtempSync(join(scratchDir(), `${name}-`)), ports);
    this.atEnd(() => node.remove());
    this.atEnd(() => node.stop());
    const started = Date.now();
    await node.start({ users: this.config.rabbit });
    const r = this.config.rabbit;
    this.say.saw(
      `Um nó RabbitMQ só deste experimento iniciado, ${node.node} em 127.0.0.1:${ports.amqp} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    return {
      node,
      /** The broker services' settings for it. */
      env: {
        BROKER_HOST: "127.0.0.1",
        BROKER_PORT: String(ports.amqp),
        BROKER_VHOST: "/",
        BROKER_USER: r.user,
        BROKER_PASSWORD: r.password,
      },
      urlAdmin: amqpUrl({ host: "127.0.0.1", port: ports.amqp, ...r.admin, vhost: "/" }),
    };
  }

  /** A database file of its own for a service, in this run's folder. */
  dbPath(name: string): string {
    return join(this.dir, `${name}.db`);
  }

  /**
   * Starts a service of the shop (`dir`: its workspace folder) as a process, logging JSON
   * (the lab reads it), and stops it with SIGTERM at the end unless stopped before.
   */
  async start(name: string, dir: string, env: Record<string, string>): Promise<ServiceProcess> {
    const service = await ServiceProcess.start(name, dir, {
      PORTA: "0",
      HOST: "127.0.0.1",
      LOG_FORMAT: "json",
      ...env,
    });
    this.atEnd(() => service.stop());
    return service;
  }

  /**
   * The event-log edition's core: the shop's Kafka and an orders API on this run's topics,
   * on the port the person asked for, with its database in this run's folder.
   */
  async eventLogShop(): Promise<{ brokers: string; url: string; ordersDb: string }> {
    const brokers = await this.kafka();
    const ordersDb = this.dbPath("pedidos");
    const orders = await this.startEventLog("orders-api", "orders-api", brokers, {
      PORTA: String(this.options.port),
      DB_PATH: ordersDb,
    });
    const url = orders.url();
    this.say.saw(`API de pedidos em ${url}`);
    return { brokers, url, ordersDb };
  }

  /** An event-log service on this run's topics and groups (KAFKA_PREFIXO). */
  startEventLog(
    name: string,
    dir: "orders-api" | "payments",
    brokers: string,
    env: Record<string, string> = {},
  ): Promise<ServiceProcess> {
    return this.start(name, dir, { KAFKA_BROKERS: brokers, KAFKA_PREFIXO: this.prefix, ...env });
  }
}
