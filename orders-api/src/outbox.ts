import type { Publicador } from "@shop/kafka";
import type { Logger } from "@shop/service";
import type { PedidosStore } from "./store.ts";

/** The order was saved, but its event was not confirmed in time; the relay keeps trying. */
export class EnvioPendente extends Error {}

export interface Relay {
  /** Resolves when this outbox row has been acknowledged by Kafka; rejects after timeoutMs. */
  aguardarEnvio(outboxId: number, timeoutMs: number): Promise<void>;
  /** A new row is there: publish now rather than at the next poll. */
  notificar(): void;
  stop(): Promise<void>;
}

/**
 * The outbox relay: publishes pending rows in id order, as one batch per round (acks from
 * all in-sync replicas), and marks them sent only after the acknowledgement. A crash
 * between the publish and the mark publishes those rows again: the consumers are
 * idempotent. While Kafka is down it retries with a growing pause; nothing is dropped.
 */
export function startRelay({
  store,
  publicador,
  log,
  lote = 500,
  pollMs = 1000,
}: {
  store: PedidosStore;
  publicador: Publicador;
  log: Logger;
  lote?: number;
  pollMs?: number;
}): Relay {
  const waiters = new Map<number, () => void>();
  let running = true;
  let wake: (() => void) | null = null;
  let failing = false;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function loop() {
    let backoff = 250;
    while (running) {
      const rows = store.outboxPendentes(lote);
      if (rows.length === 0) {
        await pause(pollMs);
        continue;
      }
      try {
        const confirmacoes = await publicador.publicarLote(
          rows.map((r) => ({
            topic: r.topico,
            key: r.chave,
            value: r.valor,
            ...(r.traceparent ? { headers: { traceparent: r.traceparent } } : {}),
          })),
        );
        store.marcarEnviados(
          rows.map((r, i) => ({
            id: r.id,
            pedidoId: r.pedido_id,
            topico: r.topico,
            particao: confirmacoes[i]?.partition ?? -1,
            offset: confirmacoes[i]?.offset ?? "",
          })),
        );
        for (const r of rows) {
          waiters.get(r.id)?.();
          waiters.delete(r.id);
        }
        if (failing)
          log.info("outbox: Kafka acknowledges again; pending events published", {
            rows: rows.length,
          });
        failing = false;
        backoff = 250;
      } catch (error) {
        if (!failing) {
          log.warn(
            "outbox: Kafka did not acknowledge; the events stay pending and will be retried",
            {
              pending: store.estadoOutbox().pendentes,
              error: (error as Error).message,
            },
          );
        }
        failing = true;
        await pause(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }
  const done = loop();

  return {
    aguardarEnvio(outboxId, timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(outboxId);
          reject(
            new EnvioPendente(`outbox row ${outboxId} not acknowledged within ${timeoutMs} ms`),
          );
        }, timeoutMs);
        waiters.set(outboxId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    notificar() {
      wake?.();
    },
    async stop() {
      running = false;
      wake?.();
      await done;
    },
  };
}
