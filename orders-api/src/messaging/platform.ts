import type { DeadLetter, KafkaNames, Plataforma } from "@shop/contracts";
import { deadLetterCounts, describePlatform, headerText, readersOf, readToEnd } from "@shop/kafka";
import { cachedFor } from "@shop/service";
import type { Kafka } from "kafkajs";

/**
 * The platform panel's data, read through one admin connection and kept for a second, so
 * that many browsers polling every 2 s cost Kafka one round of admin requests a second.
 */
export function platformReader(kafka: Kafka, names: KafkaNames) {
  const admin = kafka.admin();
  let connected: Promise<void> | null = null;
  // Who reads what, as in the spec's topic table; other groups (auditoria, say) are found
  // by their committed offsets on these topics, looked for every 10 s.
  const known = {
    [names.topics.pedidosCriados]: [names.groups.pagamentos, names.groups.analytics],
    [names.topics.pagamentosResultados]: [names.groups.pedidosApi, names.groups.analytics],
  };
  const dlq = {
    [names.topics.pedidosCriados]: names.dlq.pedidosCriados,
    [names.topics.pagamentosResultados]: names.dlq.pagamentosResultados,
  };
  const readers = cachedFor(10_000, () => readersOf(admin, known, names.prefix));
  const lettersOf = new Map(
    Object.values(dlq).map((topic) => [
      topic,
      cachedFor(2000, () => readLetters(kafka, topic, `${names.prefix}painel-mortas`)),
    ]),
  );
  return {
    read: cachedFor(1000, async (): Promise<Plataforma> => {
      connected ??= admin.connect().catch((error: unknown) => {
        connected = null;
        throw error;
      });
      await connected;
      const platform = await describePlatform(admin, await readers());
      return { ...platform, mortas: await deadLetterCounts(admin, dlq) };
    }),
    /**
     * A dead-letter topic's letters, oldest first, read to its end (at most once every 2 s
     * per topic); null when it is not one of the shop's dead-letter topics.
     */
    letters(topic: string): Promise<DeadLetter[]> | null {
      const read = lettersOf.get(topic);
      return read ? read() : null;
    },
    async close() {
      if (connected) await admin.disconnect();
    },
  };
}

/** A dead-letter topic's letters, oldest first, each with where it came from and why. */
async function readLetters(kafka: Kafka, topic: string, groupId: string): Promise<DeadLetter[]> {
  const records = await readToEnd(kafka, [topic], groupId);
  return records
    .sort(
      (a, b) => a.partition - b.partition || Number(a.message.offset) - Number(b.message.offset),
    )
    .map(({ partition, message }) => {
      const h = message.headers;
      return {
        onde: `${topic}[${partition}]@${message.offset}`,
        origem: `${headerText(h, "dlq-topico-original")}[${headerText(h, "dlq-particao-original")}]@${headerText(h, "dlq-offset-original")}`,
        motivo: headerText(h, "dlq-motivo"),
        em: headerText(h, "dlq-em") || null,
        chave: message.key?.toString() ?? null,
        corpo: (message.value?.toString() ?? "").slice(0, 500),
      };
    });
}
