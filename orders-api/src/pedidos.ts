import { createHash } from "node:crypto";
import { fromCents, type Historico, type NovoPedido } from "@shop/contracts";
import type { Logger } from "@shop/service";
import {
  type Effect,
  newPedido,
  type Pedido,
  type Resultado,
  resultadoEffect,
} from "./domain/pedido.ts";
import {
  type Details,
  type IdempotencyKey,
  KeyTaken,
  type OutboxEntry,
  type PedidoStore,
  type PedidoWrite,
} from "./store.ts";

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
  /** What must be written in the order's transaction (its outbox row), if anything. */
  stage(pedido: Pedido): OutboxEntry | null;
  /** After the commit; throws AnnouncementFailed. Returns a decision to apply, if one came back. */
  announce(pedido: Pedido): Promise<{ resultado: Resultado; source: Details } | null>;
}

/**
 * What an Idempotency-Key remembers of its body: a hash of the body as the contract parsed
 * it. Kept keys are compared with it for 48 h, so it must not change for a body that did
 * not: a default the schema filled in for a new optional field would change it, and turn
 * every repeat of an older request into a 422 (test/unit/fingerprint.test.ts pins it).
 */
export function fingerprintOf(input: NovoPedido): string {
  return createHash("sha256").update(JSON.stringify(input)).digest("hex");
}

export type CreateOutcome =
  | { outcome: "created"; pedido: Pedido }
  | { outcome: "not-announced"; pedido: Pedido; error: AnnouncementFailed };

/** How a creation's outcome is answered (status and body): kept with an Idempotency-Key. */
export interface KeptAnswer {
  status: number;
  body: unknown;
}

/**
 * POST /pedidos's outcomes. With an Idempotency-Key (the IETF httpapi draft's semantics, as
 * Stripe uses them) a repeat is "replayed" with the first answer; the same key with another
 * body is "key-reused"; while the first request is still being answered, "key-in-progress".
 */
export type PlaceOutcome =
  | CreateOutcome
  | { outcome: "replayed"; answer: KeptAnswer }
  | { outcome: "key-reused" }
  | { outcome: "key-in-progress" };

export type ApplyOutcome =
  | { outcome: "unknown-pedido" }
  | { outcome: "applied"; status: Pedido["status"]; processadoPor: string }
  | { outcome: "repeated"; reason: string };

export interface PedidoUseCaseDeps {
  store: PedidoStore;
  announcer: PedidoAnnouncer;
  log: Logger;
  now?: () => Date;
}

/** The orders API's use cases: transport-free stories, each a few lines. */
export function pedidoUseCases({ store, announcer, log, ...deps }: PedidoUseCaseDeps) {
  const now = deps.now ?? (() => new Date());
  let keysForgottenAt = 0;
  /** Idempotency-Keys whose first request is being answered now, in this process. */
  const inProgress = new Set<string>();

  /** Keys older than KEY_RETENTION_MS are forgotten, at most once an hour, by a request with a key. */
  async function forgetOldKeys() {
    const t = now().getTime();
    if (t - keysForgottenAt < 3600_000) return;
    keysForgottenAt = t;
    await store.forgetKeys(new Date(t - KEY_RETENTION_MS).toISOString());
  }

  /**
   * A result moves the order only while it is AGUARDANDO_PAGAMENTO (decided under the
   * order's row, in the store's transaction); both steps go on its timeline.
   */
  function resultadoWrite(
    pedido: Pedido,
    resultado: Resultado & { processadoEm?: string },
    source: Details,
  ): PedidoWrite<Effect> {
    const effect = resultadoEffect(pedido.status, resultado);
    const { instancia, status, motivo } = resultado;
    return {
      status: effect.apply ? effect : null,
      steps: [
        {
          etapa: "decidido",
          details: { instancia, status, motivo, ...source },
          at: resultado.processadoEm,
        },
        effect.apply
          ? { etapa: "resultado-aplicado", details: { status: effect.status } }
          : { etapa: "resultado-repetido", details: { porque: effect.reason } },
      ],
      answer: effect,
    };
  }

  /** aplicarResultadoOnResultadoPagamento: idempotent, only while AGUARDANDO_PAGAMENTO. */
  async function applyResultado(
    resultado: Resultado & { pedidoId: number; processadoEm?: string },
    source: Details,
  ): Promise<ApplyOutcome> {
    const effect = await store.updatePedido(resultado.pedidoId, (pedido) =>
      resultadoWrite(pedido, resultado, source),
    );
    if (effect === null) return { outcome: "unknown-pedido" };
    if (!effect.apply) return { outcome: "repeated", reason: effect.reason };
    return { outcome: "applied", status: effect.status, processadoPor: effect.processadoPor };
  }

  /**
   * A new order, AGUARDANDO_PAGAMENTO, saved with its Idempotency-Key (when given) and what
   * the announcer stages (its event), in one transaction; then announced.
   */
  async function createPedido(input: NovoPedido, key?: IdempotencyKey): Promise<CreateOutcome> {
    if (key) await forgetOldKeys();
    const pedido = await store.savePedido(newPedido(input, now()), {
      ...(key ? { key } : {}),
      outboxOf: announcer.stage,
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
    return { outcome: "created", pedido: (await store.findPedido(pedido.id)) ?? pedido };
  }

  /** A keyed request's first creation: its answer (`answerOf`) kept for the repeats. */
  async function createKeyed(
    input: NovoPedido,
    key: IdempotencyKey,
    answerOf: (o: CreateOutcome) => KeptAnswer,
  ): Promise<CreateOutcome> {
    inProgress.add(key.key);
    try {
      const o = await createPedido(input, key);
      const answer = answerOf(o);
      try {
        await store.saveAnswer(key.key, answer.status, answer.body);
      } catch (error) {
        // The order and its key are saved; a repeat gets the order as it is then. A failure
        // here (a full disk) must not tell this client that nothing was saved.
        log.warn("the answer of a keyed request could not be kept", { error: String(error) });
      }
      return o;
    } finally {
      inProgress.delete(key.key);
    }
  }

  return {
    /**
     * POST /pedidos: a new order, or, with an Idempotency-Key already used, the answer its
     * first request got (PlaceOutcome). `answerOf` is how the caller answers a creation.
     */
    async placePedido(
      input: NovoPedido,
      key: string | undefined,
      answerOf: (o: CreateOutcome) => KeptAnswer,
    ): Promise<PlaceOutcome> {
      if (!key) return createPedido(input);
      const fingerprint = fingerprintOf(input);
      const kept = await store.findKey(key);
      if (kept && kept.fingerprint !== fingerprint) return { outcome: "key-reused" };
      if (inProgress.has(key)) return { outcome: "key-in-progress" };
      if (!kept) {
        try {
          return await createKeyed(input, { key, fingerprint }, answerOf);
        } catch (error) {
          // Another instance saved the same key between the look and the save: its order
          // is the one (the database keeps one key), answered once it is.
          if (!(error instanceof KeyTaken)) throw error;
          return { outcome: "key-in-progress" };
        }
      }
      if (kept.status !== null)
        return { outcome: "replayed", answer: { status: kept.status, body: kept.answer } };
      // Its first answer died with an earlier process: the order it created, as it is now.
      const pedido = (await store.findPedido(kept.pedidoId)) as Pedido;
      return { outcome: "replayed", answer: answerOf({ outcome: "created", pedido }) };
    },

    applyResultado,

    getPedido: (id: number) => store.findPedido(id),
    listPedidos: (limit?: number) => store.listPedidos(limit),

    /** The timeline: created, then each step stored since; null for an unknown order. */
    async getHistorico(id: number): Promise<Historico | null> {
      const pedido = await store.findPedido(id);
      if (!pedido) return null;
      return {
        pedidoId: id,
        etapas: [
          {
            etapa: "criado",
            em: pedido.criadoEm,
            detalhes: { item: pedido.item, valor: fromCents(pedido.valorCentavos) },
          },
          ...(await store.steps(id)),
        ],
      };
    },
  };
}

export type PedidoUseCases = ReturnType<typeof pedidoUseCases>;
