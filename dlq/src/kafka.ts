import { nomesKafka } from "@shop/contracts";
import { comRetentativas, createKafka, createPublisher } from "@shop/kafka";
import type { Logger } from "@shop/service";
import type { Admin, IHeaders, Kafka } from "kafkajs";
import type { CartaMorta } from "./cartas.ts";

const header = (h: IHeaders | undefined, name: string) => h?.[name]?.toString() ?? "";

/**
 * Kafka's dead letters are records in `<topic>.dlq`. Kafka never deletes them, so a
 * consumer group of this CLI (`<prefix>dlq-redrive`) remembers, by its committed offset,
 * which ones were already redriven.
 */
export function kafkaDlq(brokers: string[], prefix: string, log: Logger) {
  const nomes = nomesKafka(prefix);
  const topicos = [nomes.dlq.pedidosCriados, nomes.dlq.pagamentosResultados];
  const grupo = `${prefix}dlq-redrive`;
  const kafka: Kafka = createKafka(brokers, "dlq-cli", log);

  async function redriven(admin: Admin, topic: string): Promise<Map<number, number>> {
    const [t] = await comRetentativas(() =>
      admin.fetchOffsets({ groupId: grupo, topics: [topic] }),
    );
    return new Map((t?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]));
  }

  /** Reads every record of the dead-letter topics, up to the end seen now. */
  async function ler(): Promise<CartaMorta[]> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const topics = topicos.filter((t) => existing.has(t));
      const falta = new Map<string, number>(); // "topic:partition" -> end offset still to reach
      const done = new Map<string, Map<number, number>>();
      for (const topic of topics) {
        done.set(topic, await redriven(admin, topic));
        for (const p of await admin.fetchTopicOffsets(topic)) {
          if (Number(p.high) > Number(p.low)) falta.set(`${topic}:${p.partition}`, Number(p.high));
        }
      }
      if (falta.size === 0) return [];
      const readerGroup = `${prefix}dlq-reader-${process.pid}-${Date.now()}`;
      const consumer = kafka.consumer({ groupId: readerGroup });
      const cartas: CartaMorta[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topics, fromBeginning: true });
        await new Promise<void>((resolve, reject) => {
          consumer
            .run({
              eachMessage: async ({ topic, partition, message }) => {
                const h = message.headers;
                cartas.push({
                  id: `kafka:${topic}:${partition}:${message.offset}`,
                  edicao: "kafka",
                  onde: `${topic}[${partition}]@${message.offset}`,
                  origem: `${header(h, "dlq-topico-original")}[${header(h, "dlq-particao-original")}]@${header(h, "dlq-offset-original")}`,
                  motivo: header(h, "dlq-motivo"),
                  tentativas: Number(header(h, "dlq-tentativas") || 1),
                  estado:
                    Number(message.offset) < (done.get(topic)?.get(partition) ?? 0)
                      ? "reenviada"
                      : "pendente",
                  chave: message.key?.toString() ?? null,
                  cabecalhos: Object.fromEntries(
                    Object.entries(h ?? {}).map(([k, v]) => [k, String(v)]),
                  ),
                  corpo: message.value?.toString() ?? "",
                });
                const key = `${topic}:${partition}`;
                if (Number(message.offset) + 1 >= (falta.get(key) ?? 0)) falta.delete(key);
                if (falta.size === 0) resolve();
              },
            })
            .catch(reject);
        });
      } finally {
        await consumer.disconnect();
        await admin.deleteGroups([readerGroup]).catch(() => {});
      }
      return cartas.sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Puts every pending dead letter back on its original topic (same key and value, with its
   * attempt count), then marks it redriven. A record that fails again returns to the
   * dead letters with the count raised. Nothing is lost: the mark comes after the ack.
   */
  async function reenviar(filtro: (c: CartaMorta) => boolean): Promise<CartaMorta[]> {
    const pendentes = (await ler()).filter((c) => c.estado === "pendente" && filtro(c));
    if (pendentes.length === 0) return [];
    const publicador = createPublisher(kafka, 10_000, log);
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const c of pendentes) {
        const [, topic, partition, offset] = c.id.split(":") as [string, string, string, string];
        const original = c.cabecalhos["dlq-topico-original"] as string;
        await publicador.publicar(original, c.chave ?? "", c.corpo, {
          "dlq-tentativas": String(c.tentativas),
          "dlq-reenviado-de": `${topic}:${partition}:${offset}`,
        });
        await admin.setOffsets({
          groupId: grupo,
          topic,
          partitions: [{ partition: Number(partition), offset: String(Number(offset) + 1) }],
        });
      }
    } finally {
      await admin.disconnect();
      await publicador.close();
    }
    return pendentes;
  }

  return { ler, reenviar };
}
