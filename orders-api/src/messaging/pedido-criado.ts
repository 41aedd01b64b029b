import { fromCents, type KafkaNames, PedidoCriado, pedidoKey } from "@shop/contracts";
import type { Publisher } from "@shop/kafka";
import { currentTraceparent, type Logger } from "@shop/service";
import type { Pedido } from "../domain/pedido.ts";
import { AnnouncementFailed, type PedidoAnnouncer } from "../pedidos.ts";
import type { PedidoStore } from "../store.ts";
import { type OutboxRelay, SendRefused } from "./outbox-relay.ts";

/**
 * The PedidoCriado record of an order: key = pedidoId as text, value = the contract's JSON.
 * The event takes the order's fields it declares (encode keeps those, in the contract's
 * order), so a field the contract adds to both comes along without a line here.
 */
export function pedidoCriadoRecord(names: KafkaNames, pedido: Pedido) {
  return {
    topic: names.topics.pedidosCriados,
    key: pedidoKey(pedido.id),
    value: PedidoCriado.encode({
      ...pedido,
      versao: 1,
      pedidoId: pedido.id,
      valor: fromCents(pedido.valorCentavos),
    }),
  };
}

const notAcknowledged = (then: string) =>
  `Kafka did not acknowledge its PedidoCriado event in time; it stays AGUARDANDO_PAGAMENTO and ${then}`;

/**
 * With the outbox: the event is written in the order's own transaction (stage) and the
 * relay publishes it; announce waits for the relay's acknowledgement, at most confirmMs.
 */
export function outboxAnnouncer(deps: {
  names: KafkaNames;
  relay: OutboxRelay;
  confirmMs: number;
}): PedidoAnnouncer {
  const { names, relay, confirmMs } = deps;
  return {
    // The request's trace goes with its event (the relay publishes outside its context).
    stage: (pedido) => ({
      ...pedidoCriadoRecord(names, pedido),
      traceparent: currentTraceparent(),
    }),
    async announce(pedido) {
      relay.wake();
      try {
        await relay.waitUntilSent(pedido.id, confirmMs);
        return null;
      } catch (error) {
        throw new AnnouncementFailed(
          notAcknowledged(
            error instanceof SendRefused
              ? `Kafka refused its event for good (${error.message}); the event is set aside (GET /saude) and later orders go on`
              : "the outbox will publish the event as soon as Kafka is back",
          ),
          { cause: error },
        );
      }
    },
  };
}

/** Without the outbox (the spec's configuration): publish after the commit and wait. */
export function directAnnouncer(deps: {
  store: PedidoStore;
  names: KafkaNames;
  publisher: Publisher;
  log: Logger;
}): PedidoAnnouncer {
  const { store, names, publisher, log } = deps;
  return {
    stage: () => null,
    async announce(pedido) {
      const record = pedidoCriadoRecord(names, pedido);
      try {
        const ack = await publisher.publish(record.topic, record.key, record.value);
        await store.insertStep(pedido.id, "evento-confirmado", {
          topico: record.topic,
          particao: ack.partition,
          offset: ack.offset,
        });
        log.info("PedidoCriado acknowledged", {
          pedido: pedido.id,
          partition: ack.partition,
          offset: ack.offset,
        });
        return null;
      } catch (error) {
        throw new AnnouncementFailed(notAcknowledged("nothing will charge it"), { cause: error });
      }
    },
  };
}
