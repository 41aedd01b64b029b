import { kafkaNames } from "@shop/contracts";
import {
  createKafka,
  createPublisher,
  createTopicsWaiting,
  headerText,
  type KafkaSecurity,
  NO_KAFKA_SECURITY,
  type Publisher,
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

/** The Kafka side of the CLI: its client, the topics it reads, and the bytes of what it read. */
interface KafkaLetters {
  kafka: Kafka;
  prefix: string;
  log: Logger;
  dlqTopics: string[];
  /** The compacted topic of the letters redriven. */
  redrives: string;
  /** The bytes of each letter read by the last readLetters, by id. */
  raw: Map<string, RawRecord>;
  /** What the last readLetters noticed, for the CLI to print beside the letters. */
  notes: string[];
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
  const k: KafkaLetters = {
    kafka: createKafka(brokers, "dlq-cli", log, security),
    prefix,
    log,
    dlqTopics: [names.dlq.pedidosCriados, names.dlq.pagamentosResultados],
    redrives: names.dlqRedrives,
    raw: new Map(),
    notes: [],
  };
  return {
    name: "Kafka",
    notes: k.notes,
    read: () => readLetters(k),
    redrive: (filter: (c: DeadLetter) => boolean, fixedBody?: string) =>
      redriveLetters(k, filter, fixedBody),
  };
}

/** Reads every record of the dead-letter topics (and of the redrive record), up to the end seen now. */
async function readLetters(k: KafkaLetters): Promise<DeadLetter[]> {
  const { redrives } = k;
  const records = await readToEnd(k.kafka, [...k.dlqTopics, redrives], `${k.prefix}dlq-reader`);
  const letters: DeadLetter[] = [];
  const redriven = new Set<string>();
  for (const { topic, partition, message } of records) {
    if (topic === redrives) {
      if (message.key && message.value) redriven.add(message.key.toString());
      continue;
    }
    const h = message.headers ?? {};
    const id = `kafka:${topic}:${partition}:${message.offset}`;
    k.raw.set(id, { key: message.key, value: message.value ?? Buffer.alloc(0), headers: h });
    letters.push({
      id,
      edicao: "kafka",
      onde: `${topic}[${partition}]@${message.offset}`,
      origem: `${header(h, "dlq-topico-original")}[${header(h, "dlq-particao-original")}]@${header(h, "dlq-offset-original")}`,
      motivo: header(h, "dlq-motivo"),
      tentativas: Number(header(h, "dlq-tentativas") || 1),
      estado: "pendente",
      chave: message.key?.toString() ?? null,
      cabecalhos: Object.fromEntries(Object.entries(h).map(([key, v]) => [key, String(v)])),
      corpo: message.value?.toString() ?? "",
    });
  }
  for (const c of letters) if (redriven.has(c.id)) c.estado = "reenviada";
  letters.sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
  return withoutCopies(k, letters);
}

/**
 * A record is dead-lettered at least once, not exactly once: a consumer that lost its group
 * membership before it committed reads the record again and writes its dead letter again
 * (a busy machine's 6 s session, 2026-12-01). Such a copy (same original record, same
 * attempt, same bytes) is the same letter: listed once, as the first written, and redriven
 * once. Letters written by hand without the original's place are each their own.
 */
function withoutCopies(k: KafkaLetters, letters: DeadLetter[]): DeadLetter[] {
  const first = new Map<string, DeadLetter>();
  const copies: string[] = [];
  const kept = letters.filter((c) => {
    if (!c.cabecalhos["dlq-offset-original"]) return true;
    const same = `${c.origem}|${c.tentativas}|${k.raw.get(c.id)?.value.toString("base64")}`;
    const original = first.get(same);
    if (original) copies.push(`${c.id} is a copy of ${original.id}`);
    else first.set(same, c);
    return !original;
  });
  k.notes.splice(0, k.notes.length);
  if (copies.length > 0)
    k.notes.push(
      `${copies.length} dead letter(s) written twice (a record read again before its commit), each listed and redriven once: ${copies.join("; ")}`,
    );
  return kept;
}

/** The redrive record's topic: compacted, one record per letter redriven. */
async function ensureRedriveTopic(admin: Admin, redrives: string): Promise<void> {
  if ((await admin.listTopics()).includes(redrives)) return;
  await createTopicsWaiting(admin, [
    {
      topic: redrives,
      numPartitions: 1,
      configEntries: [{ name: "cleanup.policy", value: "compact" }],
    },
  ]).catch((error: unknown) => {
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
async function redriveLetters(
  k: KafkaLetters,
  filter: (c: DeadLetter) => boolean,
  fixedBody?: string,
): Promise<DeadLetter[]> {
  const pending = (await readLetters(k)).filter((c) => c.estado === "pendente" && filter(c));
  if (pending.length === 0) return [];
  const publisher = createPublisher(k.kafka, 10_000, k.log);
  const admin = k.kafka.admin();
  await admin.connect();
  try {
    await ensureRedriveTopic(admin, k.redrives);
    for (const c of pending) await redriveOne(k, publisher, c, fixedBody);
  } finally {
    await admin.disconnect();
    await publisher.close();
  }
  return pending;
}

/** One letter back on its original topic, then its redrive recorded. */
async function redriveOne(
  k: KafkaLetters,
  publisher: Publisher,
  c: DeadLetter,
  fixedBody: string | undefined,
): Promise<void> {
  const rawRecord = k.raw.get(c.id) as RawRecord;
  const original = c.cabecalhos["dlq-topico-original"] as string;
  const headers: IHeaders = Object.fromEntries(
    Object.entries(rawRecord.headers).filter(([key]) => !key.startsWith("dlq-")),
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
      topic: k.redrives,
      key: c.id,
      value: JSON.stringify({
        em: new Date().toISOString(),
        para: `${to?.topic}[${to?.partition}]@${to?.offset}`,
      }),
    },
  ]);
}
