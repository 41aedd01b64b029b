import { type Publicador, recusadoDeVez } from "@shop/kafka";
import { type Logger, metricas } from "@shop/service";
import type { LinhaOutbox, PedidosStore } from "./store.ts";

/** The order was saved, but its event was not confirmed in time; the relay keeps trying. */
export class EnvioPendente extends Error {}

/** Kafka refused the order's event for good: the row is set aside, the outbox goes on. */
export class EnvioRecusado extends Error {}

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
 *
 * A batch that Kafka refuses for good (a non-retriable error such as MESSAGE_TOO_LARGE)
 * is sent again a row at a time, so that the row Kafka refuses is found and set aside with
 * its reason (GET /saude, the metrics, the platform panel) and the rows after it go on:
 * one row can never stop every later order. (Rows of the refused batch that Kafka had
 * already written on other partitions are written again: the consumers are idempotent.)
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
  const waiters = new Map<number, (error?: Error) => void>();
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
        await enviar(rows);
        if (failing)
          log.info("outbox: Kafka acknowledges again; pending events published", {
            rows: rows.length,
          });
        failing = false;
        backoff = 250;
      } catch (error) {
        if (recusadoDeVez(error)) {
          await umAUm(rows);
          continue;
        }
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

  /** Publishes rows in one batch, marks them sent, and tells whoever waits for them. */
  async function enviar(rows: LinhaOutbox[]): Promise<void> {
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
  }

  /**
   * After a batch was refused for good: each row alone, in order. A row refused for good
   * is set aside; any other failure (Kafka went away) ends the round, and the loop retries.
   */
  async function umAUm(rows: LinhaOutbox[]): Promise<void> {
    for (const r of rows) {
      try {
        await enviar([r]);
      } catch (error) {
        if (!recusadoDeVez(error)) return;
        const motivo = (error as Error).message;
        store.porDeLado({ id: r.id, pedidoId: r.pedido_id }, motivo);
        metricas.falhas.inc({ destino: r.topico });
        log.error(
          "outbox: Kafka refused an event for good; it is set aside and the outbox goes on",
          {
            pedido: r.pedido_id,
            outbox: r.id,
            error: motivo,
          },
        );
        waiters.get(r.id)?.(new EnvioRecusado(`Kafka refused the event for good: ${motivo}`));
        waiters.delete(r.id);
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
        waiters.set(outboxId, (error) => {
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
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
