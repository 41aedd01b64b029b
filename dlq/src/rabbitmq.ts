import {
  AmqpClient,
  amqpUrl,
  amqpUrls,
  type BrokerAddress,
  rabbitProblem,
  tlsSocketOptions,
} from "@shop/amqp";
import { ERROR_QUEUES } from "@shop/contracts";
import type { Logger } from "@shop/service";
import amqp, { type Channel, type GetMessage } from "amqplib";
import type { DeadLetter } from "./letters.ts";

interface XDeath {
  count: number;
  reason: string;
  queue: string;
  exchange: string;
  "routing-keys": string[];
}

/** A message's headers and its latest death (x-death, newest first). */
function readDeath(m: GetMessage) {
  const headers = (m.properties.headers ?? {}) as Record<string, unknown>;
  const [death] = (headers["x-death"] ?? []) as XDeath[];
  return { headers, deathRecord: death };
}

function letterOf(queue: string, position: number, m: GetMessage): DeadLetter {
  const { headers, deathRecord: death } = readDeath(m);
  return {
    id: `rabbitmq:${queue}:${position}`,
    edicao: "rabbitmq",
    onde: `${queue} #${position}`,
    origem: death
      ? `${death.queue} (exchange ${death.exchange || "(default)"}, key ${death["routing-keys"]?.[0]})`
      : "?",
    motivo: `${death?.reason ?? "?"} (the consumer's log has why)`,
    // 3 deliveries per passage through the queue; x-death counts the passages.
    tentativas: 3 * (death?.count ?? 1),
    estado: "pendente",
    chave: m.properties.messageId ?? null,
    cabecalhos: Object.fromEntries(
      Object.entries(headers)
        .filter(([k]) => k !== "x-death")
        .map(([k, v]) => [k, String(v)])
        .concat(death ? [["x-death", `${death.reason} x${death.count} from ${death.queue}`]] : []),
    ),
    corpo: m.content.toString("utf8"),
  };
}

/** The RabbitMQ side of the CLI: where it connects, the queues it reads, what it noted. */
interface RabbitLetters {
  r: BrokerAddress;
  log: Logger;
  queues: string[];
  /** What the last walk found missing, said for a person (the CLI prints it once). */
  notes: string[];
}

/**
 * RabbitMQ's dead letters are messages in the `.erros` queues. Listing looks without
 * taking (each message is fetched and put back); redrive republishes a message to the
 * exchange and routing key it came from (x-death), confirmed and routed, and only then
 * removes it from `.erros`. A message that fails again comes back with x-death's count raised.
 */
export function rabbitDlq(r: BrokerAddress, log: Logger) {
  const src: RabbitLetters = {
    r,
    log,
    queues: [ERROR_QUEUES.solicitacoes, ERROR_QUEUES.resultados],
    notes: [],
  };
  return {
    name: "RabbitMQ",
    notes: src.notes,
    read: () => readLetters(src),
    redrive: (filter: (c: DeadLetter) => boolean, corpo?: string) =>
      redriveLetters(src, filter, corpo),
  };
}

/** A connection, or a sentence saying why there is none (the setting to fix). */
async function connect(r: BrokerAddress) {
  try {
    const conn = await amqp.connect(amqpUrl(r), tlsSocketOptions(r.tls?.caFile));
    // A failure surfaces through the call that caused it; this keeps it from also
    // being an unhandled 'error' event that kills the CLI with a stack trace.
    conn.on("error", () => {});
    return conn;
  } catch (error) {
    throw new Error(rabbitProblem(r, error), { cause: error });
  }
}

/**
 * Fetches, one by one, the messages each `.erros` queue holds now and hands each to
 * `visit` (unacked: whatever visit does not ack goes back when the channel closes);
 * `atQueueEnd` runs after each queue. A queue that does not exist (the broker edition
 * never ran on this RabbitMQ) holds no letter: it is noted, not an error.
 */
async function walkQueues(
  src: RabbitLetters,
  visit: (ch: Channel, queue: string, position: number, m: GetMessage) => Promise<void>,
  atQueueEnd: (ch: Channel) => void = () => {},
): Promise<void> {
  const conn = await connect(src.r);
  const missing: string[] = [];
  try {
    for (const queue of src.queues) {
      // A channel per queue: RabbitMQ closes the channel of a check that found no queue.
      const ch = await conn.createChannel();
      ch.on("error", () => {});
      const found = await ch.checkQueue(queue).catch((error: unknown) => {
        if (/NOT_FOUND|404/.test(String(error))) return null;
        throw error;
      });
      if (!found) {
        missing.push(queue);
        continue;
      }
      for (let i = 0; i < found.messageCount; i++) {
        const m = await ch.get(queue, { noAck: false });
        if (!m) break;
        await visit(ch, queue, i + 1, m);
      }
      atQueueEnd(ch);
      await ch.close();
    }
  } finally {
    await conn.close().catch(() => {});
  }
  noteMissing(src, missing);
}

function noteMissing(src: RabbitLetters, missing: string[]): void {
  src.notes.splice(0, src.notes.length);
  if (missing.length === 0) return;
  const which =
    missing.length === src.queues.length
      ? "none of the shop's dead-letter queues"
      : `no ${missing.join(", ")}`;
  src.notes.push(
    `RabbitMQ (vhost ${src.r.vhost}) has ${which} yet: the broker edition has not run on it (npm run start:broker declares them), so it holds no dead letter`,
  );
}

async function readLetters(src: RabbitLetters): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await walkQueues(
    src,
    async (_ch, queue, position, m) => {
      letters.push(letterOf(queue, position, m));
    },
    // Put them all back, in order; closing the channel would do the same.
    (ch) => ch.nackAll(true),
  );
  return letters;
}

/** With `corpo`, a fixed copy goes back instead of the body, marked `x-corrigido`. */
async function redriveLetters(
  src: RabbitLetters,
  filter: (c: DeadLetter) => boolean,
  corpo?: string,
): Promise<DeadLetter[]> {
  const { r, log } = src;
  const client = new AmqpClient({
    url: amqpUrls(r),
    caFile: r.tls?.caFile ?? null,
    log,
    topology: async () => {},
  });
  const done: DeadLetter[] = [];
  try {
    await walkQueues(src, async (ch, queue, position, m) => {
      const c = letterOf(queue, position, m);
      const { headers, deathRecord } = readDeath(m);
      if (!filter(c) || !deathRecord) return; // left unacked: back in the queue when the channel closes
      await client.publish(
        deathRecord.exchange,
        deathRecord["routing-keys"]?.[0] ?? "",
        corpo ?? m.content.toString("utf8"),
        5000,
        {
          // x-death stays: when it fails again, the broker raises its count.
          ...headers,
          "x-reenvios": Number(headers["x-reenvios"] ?? 0) + 1,
          ...(corpo === undefined ? {} : { "x-corrigido": true }),
        },
      );
      ch.ack(m);
      done.push(c);
    });
  } finally {
    await client.close();
  }
  return done;
}
