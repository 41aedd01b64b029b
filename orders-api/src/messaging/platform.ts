import type { KafkaNames, Plataforma } from "@shop/contracts";
import { describePlatform } from "@shop/kafka";
import { cachedFor } from "@shop/service";
import type { Kafka } from "kafkajs";

/**
 * The platform panel's data, read through one admin connection and kept for a second, so
 * that many browsers polling every 2 s cost Kafka one round of admin requests a second.
 */
export function platformReader(kafka: Kafka, names: KafkaNames) {
  const admin = kafka.admin();
  let connected: Promise<void> | null = null;
  // Who reads what, as in the spec's topic table.
  const readers = {
    [names.topics.pedidosCriados]: [names.groups.pagamentos, names.groups.analytics],
    [names.topics.pagamentosResultados]: [names.groups.pedidosApi, names.groups.analytics],
  };
  return {
    read: cachedFor(1000, (): Promise<Plataforma> => {
      connected ??= admin.connect().catch((error: unknown) => {
        connected = null;
        throw error;
      });
      return connected.then(() => describePlatform(admin, readers));
    }),
    async close() {
      if (connected) await admin.disconnect();
    },
  };
}
