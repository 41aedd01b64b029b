import { kafkaNames } from "@shop/contracts";
import {
  createKafka,
  createPublisher,
  headerText,
  type KafkaSecurity,
  NO_KAFKA_SECURITY,
  readToEnd,
} from "@shop/kafka";
import type { Logger } from "@shop/service";
import type { Admin, IHeaders, Kafka } from "kafkajs";
import type { DeadLetter } from "./letters.ts";

const header = headerText;

/** A dead letter's record as Kafka holds it: the bytes a redrive sends back. */
interface RawRecord {
  key: Buffer | null;
  value: Buffer;
  headers: IHeaders;
}

/**
 * Kafka's dead letters are records in `<topic>.dlq`. Kafka never deletes them, so the CLI
 * keeps its own record of each letter it redrove: one record per letter, keyed by the
 * letter's id, in the compacted topic `<prefix>dlq-reenvios`. Each letter's state is its
 * own: redriving letter 5 leaves 3 and 4 pending.
 */
export function kafkaDlq(
  brokers: string[],
  prefix: string,
  log: Logger,
  security: KafkaSecurity = NO_KAFKA_SECURITY,
) {
  const names = kafkaNames(prefix);
  const dlqTopics = [names.dlq.pedidosCriados, names.dlq.pagamentosResultados];
  const redrives = names.dlqRedrives;
  const kafka: Kafka = createKafka(brokers, "dlq-cli", log, security);
  /** The bytes of each letter read by the last ler(), by id. */
  const raw = new Map<string, RawRecord>();

  /** Reads every record of the dead-letter topics (and of the redrive record), up to the end seen now. */
  async function read(): Promise<DeadLetter[]> {
    const records = await readToEnd(kafka, [...dlqTopics, redrives], `${prefix}dlq-reader`);
    const letters: DeadLetter[] = [];
    const redriven = new Set<string>();
    for (const { topic, partition, message } of records) {
      if (topic === redrives) {
        if (message.key && message.value) redriven.add(message.key.toString());
        continue;
      }
      const h = message.headers ?? {};
      const id = `kafka:${topic}:${partition}:${message.offset}`;
      raw.set(id, { key: message.key, value: message.value ?? Buffer.alloc(0), headers: h });
      letters.push({
        id,
        edicao: "kafka",
        onde: `${topic}[${partition}]@${message.offset}`,
        origem: `${header(h, "dlq-topico-original")}[${header(h, "dlq-particao-original")}]@${header(h, "dlq-offset-original")}`,
        motivo: header(h, "dlq-motivo"),
        tentativas: Number(header(h, "dlq-tentativas") || 1),
        estado: "pendente",
        chave: message.key?.toString() ?? null,
        cabecalhos: Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)])),
        corpo: message.value?.toString() ?? "",
      });
    }
    for (const c of letters) if (redriven.has(c.id)) c.estado = "reenviada";
    return letters.sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
  }

  /** The redrive record's topic: compacted, one record per letter redriven. */
  async function ensureRedriveTopic(admin: Admin): Promise<void> {
    if ((await admin.listTopics()).includes(redrives)) return;
    await admin
      .createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: redrives,
            numPartitions: 1,
            configEntries: [{ name: "cleanup.policy", value: "compact" }],
          },
        ],
      })
      .catch((error: unknown) => {
        // Another CLI created it meanwhile: that is what we wanted.
        if (!String(error).includes("already exists")) throw error;
      });
  }

  /**
   * Puts pending dead letters back on their original topic, byte for byte (key, value and
   * the original record's headers), with the attempt count and where it came from; then
   * records that letter, and only it, as redriven. A record that fails again returns to
   * the dead letters with the count raised. Nothing is lost: the record of the redrive is
   * written after Kafka acknowledged the letter (a crash between the two sends it again).
   * With `fixedBody`, a fixed copy goes back instead: that value, the letter's key and headers,
   * and `dlq-corrigido: sim`.
   */
  async function redrive(
    filter: (c: DeadLetter) => boolean,
    fixedBody?: string,
  ): Promise<DeadLetter[]> {
    const pending = (await read()).filter((c) => c.estado === "pendente" && filter(c));
    if (pending.length === 0) return [];
    const publisher = createPublisher(kafka, 10_000, log);
    const admin = kafka.admin();
    await admin.connect();
    try {
      await ensureRedriveTopic(admin);
      for (const c of pending) {
        const rawRecord = raw.get(c.id) as RawRecord;
        const original = c.cabecalhos["dlq-topico-original"] as string;
        const headers: IHeaders = Object.fromEntries(
          Object.entries(rawRecord.headers).filter(([k]) => !k.startsWith("dlq-")),
        );
        const [, topic, partition, offset] = c.id.split(":") as [string, string, string, string];
        const [to] = await publisher.publishBatch([
          {
            topic: original,
            key: rawRecord.key,
            value: fixedBody === undefined ? rawRecord.value : Buffer.from(fixedBody, "utf8"),
            headers: {
              ...headers,
              "dlq-tentativas": String(c.tentativas),
              "dlq-reenviado-de": `${topic}:${partition}:${offset}`,
              ...(fixedBody === undefined ? {} : { "dlq-corrigido": "sim" }),
            },
          },
        ]);
        await publisher.publishBatch([
          {
            topic: redrives,
            key: c.id,
            value: JSON.stringify({
              em: new Date().toISOString(),
              para: `${to?.topic}[${to?.partition}]@${to?.offset}`,
            }),
          },
        ]);
      }
    } finally {
      await admin.disconnect();
      await publisher.close();
    }
    return pending;
  }

  return { name: "Kafka", notes: [] as string[], read, redrive };
}
