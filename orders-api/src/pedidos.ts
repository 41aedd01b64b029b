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
  /** `answerJson`: a keyed request's answer body as it was kept, to be sent as it is. */
  | { outcome: "created"; pedido: Pedido; answerJson?: string }
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

/**
 * What the use cases run on: the ports (a store, an announcer), a log, a clock, and what
 * this process remembers of Idempotency-Keys between requests. Built once by
 * `pedidoPorts` (src/server.ts); each use case below takes it as its first argument.
 */
export interface PedidoPorts {
  store: PedidoStore;
  announcer: PedidoAnnouncer;
  log: Logger;
  now: () => Date;
  keys: KeyMemory;
}

/** What this process remembers of Idempotency-Keys (the database keeps the rest). */
export interface KeyMemory {
  /** Keys whose first request is being answered now, in this process. */
  inProgress: Set<string>;
  /** When old keys were last forgotten (ms since the epoch). */
  forgottenAt: number;
}

export function pedidoPorts(deps: {
  store: PedidoStore;
  announcer: PedidoAnnouncer;
  log: Logger;
  now?: () => Date;
}): PedidoPorts {
  return {
    ...deps,
    now: deps.now ?? (() => new Date()),
    keys: { inProgress: new Set(), forgottenAt: 0 },
  };
}

/**
 * POST /pedidos: a new order, or, with an Idempotency-Key already used, the answer its
 * first request got (PlaceOutcome). `answerOf` is how the caller answers a creation.
 */
export async function placePedido(
  ports: PedidoPorts,
  input: NovoPedido,
  key: string | undefined,
  answerOf: (o: CreateOutcome) => KeptAnswer,
): Promise<PlaceOutcome> {
  if (!key) return createPedido(ports, input);
  const fingerprint = fingerprintOf(input);
  const kept = await ports.store.findKey(key);
  if (kept && kept.fingerprint !== fingerprint) return { outcome: "key-reused" };
  if (ports.keys.inProgress.has(key)) return { outcome: "key-in-progress" };
  if (!kept) {
    try {
      return await createKeyed(ports, input, { key, fingerprint }, answerOf);
    } catch (error) {
      // Another instance saved the same key between the look and the save: its order is
      // the one (the database keeps one key), answered once it is.
      if (!(error instanceof KeyTaken)) throw error;
      return { outcome: "key-in-progress" };
    }
  }
  if (kept.status !== null)
    return { outcome: "replayed", answer: { status: kept.status, body: kept.answer } };
  // Its first answer died with an earlier process: the order it created, as it is now.
  const pedido = (await ports.store.findPedido(kept.pedidoId)) as Pedido;
  return { outcome: "replayed", answer: answerOf({ outcome: "created", pedido }) };
}

/** A keyed request's first creation: its answer (`answerOf`) kept for the repeats. */
async function createKeyed(
  ports: PedidoPorts,
  input: NovoPedido,
  key: IdempotencyKey,
  answerOf: (o: CreateOutcome) => KeptAnswer,
): Promise<CreateOutcome> {
  ports.keys.inProgress.add(key.key);
  try {
    const o = await createPedido(ports, input, key);
    const answer = answerOf(o);
    // Serialised once: the text kept is the text this client is sent.
    const answerJson = JSON.stringify(answer.body);
    try {
      await ports.store.saveAnswer(key.key, answer.status, answerJson);
    } catch (error) {
      // The order and its key are saved; a repeat gets the order as it is then. A failure
      // here (a full disk) must not tell this client that nothing was saved.
      ports.log.warn("the answer of a keyed request could not be kept", { error: String(error) });
    }
    return o.outcome === "created" ? { ...o, answerJson } : o;
  } finally {
    ports.keys.inProgress.delete(key.key);
  }
}

/**
 * A new order, AGUARDANDO_PAGAMENTO, saved with its Idempotency-Key (when given) and what
 * the announcer stages (its event, in the outbox), in one transaction; then announced.
 */
export async function createPedido(
  ports: PedidoPorts,
  input: NovoPedido,
  key?: IdempotencyKey,
): Promise<CreateOutcome> {
  const { store, announcer } = ports;
  if (key) await forgetOldKeys(ports);
  const pedido = await store.savePedido(newPedido(input, ports.now()), {
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
  await applyResultado(ports, { ...decided.resultado, pedidoId: pedido.id }, decided.source);
  return { outcome: "created", pedido: (await store.findPedido(pedido.id)) ?? pedido };
}

/** Keys older than KEY_RETENTION_MS are forgotten, at most once an hour, by a request with a key. */
async function forgetOldKeys(ports: PedidoPorts): Promise<void> {
  const t = ports.now().getTime();
  if (t - ports.keys.forgottenAt < 3600_000) return;
  ports.keys.forgottenAt = t;
  await ports.store.forgetKeys(new Date(t - KEY_RETENTION_MS).toISOString());
}

/**
 * A ResultadoPagamento (or the synchronous decision): applied only while the order is
 * AGUARDANDO_PAGAMENTO, decided under the order's row in the store's transaction; a
 * repeated one changes nothing but the timeline (Rule E7).
 */
export async function applyResultado(
  ports: PedidoPorts,
  resultado: Resultado & { pedidoId: number; processadoEm?: string },
  source: Details,
): Promise<ApplyOutcome> {
  const effect = await ports.store.updatePedido(resultado.pedidoId, (pedido) =>
    resultadoWrite(pedido, resultado, source),
  );
  if (effect === null) return { outcome: "unknown-pedido" };
  if (!effect.apply) return { outcome: "repeated", reason: effect.reason };
  return { outcome: "applied", status: effect.status, processadoPor: effect.processadoPor };
}

/** What a result writes: the domain's effect (resultadoEffect), and both steps on the timeline. */
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

export const getPedido = (ports: PedidoPorts, id: number) => ports.store.findPedido(id);
export const listPedidos = (ports: PedidoPorts, limit?: number) => ports.store.listPedidos(limit);

/** The timeline: created, then each step stored since; null for an unknown order. */
export async function getHistorico(ports: PedidoPorts, id: number): Promise<Historico | null> {
  const pedido = await ports.store.findPedido(id);
  if (!pedido) return null;
  return {
    pedidoId: id,
    etapas: [
      {
        etapa: "criado",
        em: pedido.criadoEm,
        detalhes: { item: pedido.item, valor: fromCents(pedido.valorCentavos) },
      },
      ...(await ports.store.steps(id)),
    ],
  };
}
