import { fromCents, type Historico, type NovoPedido } from "@shop/contracts";
import {
  type Effect,
  newPedido,
  type Pedido,
  type Resultado,
  resultadoEffect,
} from "./domain/pedido.ts";
import type { Details, IdempotencyKey, IdempotencyRecord, PedidoStore } from "./store.ts";

/** Keys of Idempotency-Key are kept this long at least (the IETF draft's and Stripe's 24 h). */
export const KEY_RETENTION_MS = 48 * 3600_000;

/** The order is saved, but payments was not told (in time): it stays AGUARDANDO_PAGAMENTO. */
export class AnnouncementFailed extends Error {
  /** The error body's `erro`. */
  readonly code: string;
  constructor(message: string, options: { cause?: unknown; code?: string } = {}) {
    super(message, { cause: options.cause });
    this.code = options.code ?? "evento-nao-confirmado";
  }
}

/**
 * How a new order reaches payments (src/messaging/): a PedidoCriado through the outbox or
 * published at once, or, in the synchronous configuration, a call that answers with the
 * decision.
 */
export interface PedidoAnnouncer {
  /** Inside the order's transaction: what must be written with it (the outbox row). */
  stage(pedido: Pedido): void;
  /** After the commit; throws AnnouncementFailed. Returns a decision to apply, if one came back. */
  announce(pedido: Pedido): Promise<{ resultado: Resultado; source: Details } | null>;
}

export type CreateOutcome =
  | { outcome: "created"; pedido: Pedido }
  | { outcome: "not-announced"; pedido: Pedido; error: AnnouncementFailed };

export type ApplyOutcome =
  | { outcome: "unknown-pedido" }
  | { outcome: "applied"; status: Pedido["status"]; processadoPor: string }
  | { outcome: "repeated"; reason: string };

export interface PedidoUseCaseDeps {
  store: PedidoStore;
  /** Runs work in one transaction; the work of one turn may share it (group commit). */
  inTransaction: <T>(work: () => T) => Promise<T>;
  announcer: PedidoAnnouncer;
  now?: () => Date;
}

/** The orders API's use cases: transport-free stories, each a few lines. */
export function pedidoUseCases({ store, inTransaction, announcer, ...deps }: PedidoUseCaseDeps) {
  const now = deps.now ?? (() => new Date());
  let keysForgottenAt = 0;

  /** Keys older than KEY_RETENTION_MS are forgotten, at most once an hour, by a request with a key. */
  function forgetOldKeys() {
    const t = now().getTime();
    if (t - keysForgottenAt < 3600_000) return;
    keysForgottenAt = t;
    store.forgetKeys(new Date(t - KEY_RETENTION_MS).toISOString());
  }

  /** A result moves the order only while it is AGUARDANDO_PAGAMENTO (inside a transaction). */
  function applyInTransaction(
    pedidoId: number,
    resultado: Resultado & { processadoEm?: string },
    source: Details,
  ): Effect | null {
    const pedido = store.findPedido(pedidoId);
    if (!pedido) return null;
    const efeito = resultadoEffect(pedido.status, resultado);
    if (efeito.apply) store.updateStatus(pedidoId, efeito);
    const { instancia, status, motivo } = resultado;
    store.insertStep(
      pedidoId,
      "decidido",
      { instancia, status, motivo, ...source },
      resultado.processadoEm,
    );
    store.insertStep(
      pedidoId,
      efeito.apply ? "resultado-aplicado" : "resultado-repetido",
      efeito.apply ? { status: efeito.status } : { porque: efeito.reason },
    );
    return efeito;
  }

  /** aplicarResultadoOnResultadoPagamento: idempotent, only while AGUARDANDO_PAGAMENTO. */
  async function applyResultado(
    resultado: Resultado & { pedidoId: number; processadoEm?: string },
    source: Details,
  ): Promise<ApplyOutcome> {
    const efeito = await inTransaction(() =>
      applyInTransaction(resultado.pedidoId, resultado, source),
    );
    if (efeito === null) return { outcome: "unknown-pedido" };
    if (!efeito.apply) return { outcome: "repeated", reason: efeito.reason };
    return { outcome: "applied", status: efeito.status, processadoPor: efeito.processadoPor };
  }

  return {
    /**
     * A new order, AGUARDANDO_PAGAMENTO, saved with its Idempotency-Key (when given) and
     * what the announcer stages (its event), in one transaction; then announced.
     */
    async createPedido(input: NovoPedido, key?: IdempotencyKey): Promise<CreateOutcome> {
      if (key) forgetOldKeys();
      const pedido = await inTransaction(() => {
        const saved = store.insertPedido(newPedido(input, now()));
        if (key) store.insertKey(key, saved);
        announcer.stage(saved);
        return saved;
      });
      let decided: Awaited<ReturnType<PedidoAnnouncer["announce"]>>;
      try {
        decided = await announcer.announce(pedido);
      } catch (error) {
        if (!(error instanceof AnnouncementFailed)) throw error;
        return { outcome: "not-announced", pedido, error };
      }
      if (!decided) return { outcome: "created", pedido };
      await applyResultado({ ...decided.resultado, pedidoId: pedido.id }, decided.source);
      return { outcome: "created", pedido: store.findPedido(pedido.id) ?? pedido };
    },

    applyResultado,

    /** The Idempotency-Key's record: its fingerprint, order and the answer given. */
    findKey: (key: string): IdempotencyRecord | null => store.findKey(key),
    saveAnswer: (key: string, status: number, answer: unknown) =>
      store.saveAnswer(key, status, answer),

    getPedido: (id: number) => store.findPedido(id),
    listPedidos: (limit?: number) => store.listPedidos(limit),

    /** The timeline: created, then each step stored since; null for an unknown order. */
    getHistorico(id: number): Historico | null {
      const pedido = store.findPedido(id);
      if (!pedido) return null;
      return {
        pedidoId: id,
        etapas: [
          {
            etapa: "criado",
            em: pedido.criadoEm,
            detalhes: { item: pedido.item, valor: fromCents(pedido.valorCentavos) },
          },
          ...store.steps(id),
        ],
      };
    },
  };
}

export type PedidoUseCases = ReturnType<typeof pedidoUseCases>;
