import { createHash } from "node:crypto";
import {
  API_PEDIDOS,
  type CartaMorta,
  fromCents,
  IDEMPOTENCY_KEY_HEADER,
  type Modo,
  NovoPedidoSchema,
  type OutboxState,
  PEDIDOS_LIST_LIMITS,
  PedidoHeadersSchema,
  PedidosQuerySchema,
  type Pedido as PedidoWire,
  type Plataforma,
  type StuckPartition,
} from "@shop/contracts";
import {
  AppError,
  createHttpApp,
  errorBody,
  finishApp,
  type Logger,
  notFound,
  validate,
} from "@shop/service";
import type { Express } from "express";
import type { Pedido } from "../domain/pedido.ts";
import type { CreateOutcome, PedidoUseCases } from "../pedidos.ts";

export function toWire(p: Pedido): PedidoWire {
  return {
    id: p.id,
    cliente: p.cliente,
    item: p.item,
    quantidade: p.quantidade,
    valor: fromCents(p.valorCentavos),
    status: p.status,
    motivo: p.motivo,
    processadoPor: p.processadoPor,
    criadoEm: p.criadoEm,
  };
}

/** An order saved whose announcement failed: the 500 that says so (and what happens next). */
const failure = (o: Extract<CreateOutcome, { outcome: "not-announced" }>) =>
  new AppError(
    o.error.code,
    `order ${o.pedido.id} was saved, but ${o.error.message}`,
    500,
    undefined,
    {
      cause: o.error,
    },
  );

/** The one mapping of a creation's outcome to its HTTP answer (kept with an Idempotency-Key). */
function answerOf(o: CreateOutcome): { status: number; body: unknown } {
  if (o.outcome === "created") return { status: 201, body: toWire(o.pedido) };
  const e = failure(o);
  return { status: 500, body: errorBody(500, e.message, { mensagem: e.mensagem }) };
}

export interface AppDeps {
  pedidos: PedidoUseCases;
  /** The outbox's state; null when the outbox is off. */
  outbox: (() => OutboxState) | null;
  modo: Modo;
  /** The results consumer's stuck partitions; null without Kafka. */
  stuckPartitions: (() => StuckPartition[]) | null;
  /** The platform panel's data; null in the synchronous configuration (no Kafka). */
  plataforma: (() => Promise<Plataforma>) | null;
  /** A dead-letter topic's letters; null when the topic is not one of the shop's. */
  cartas: ((topic: string) => Promise<CartaMorta[]> | null) | null;
  frontOrigin: string;
  log: Logger;
}

/** The orders API. Handlers parse, call the use case, map the result. */
export function createApp({
  pedidos,
  outbox,
  stuckPartitions,
  modo,
  plataforma,
  cartas,
  frontOrigin,
  log,
}: AppDeps): Express {
  const app = createHttpApp({ corsOrigin: frontOrigin });

  /** Idempotency-Keys whose first request is being answered now, in this process. */
  const inProgress = new Set<string>();

  /**
   * POST /pedidos, with an Idempotency-Key or without (the IETF httpapi draft's semantics,
   * as Stripe uses them). The first request with a key creates the order, the key in the
   * same transaction, and keeps its answer: a 201 or the 500 of an event not confirmed in
   * time. The same key with the same body gets that answer again and creates nothing; with
   * another body, 422; while the first is still being answered, 409.
   */
  app.post("/pedidos", async (req, res) => {
    const input = validate(NovoPedidoSchema, req.body);
    const key = validate(PedidoHeadersSchema, req.headers)[IDEMPOTENCY_KEY_HEADER];
    if (!key) {
      const o = await pedidos.createPedido(input);
      if (o.outcome === "not-announced") throw failure(o);
      res.status(201).json(toWire(o.pedido));
      return;
    }
    const fingerprint = createHash("sha256").update(JSON.stringify(input)).digest("hex");
    const existing = pedidos.findKey(key);
    if (existing && existing.fingerprint !== fingerprint) {
      throw new AppError(
        "chave-reutilizada",
        "this Idempotency-Key was already used with a different body; use a new key for a new order",
        422,
      );
    }
    if (inProgress.has(key)) {
      throw new AppError(
        "chave-em-curso",
        "a request with this Idempotency-Key is still being answered; repeat it in a moment",
        409,
      );
    }
    if (existing) {
      res.set("Idempotent-Replayed", "true");
      if (existing.status !== null) res.status(existing.status).json(existing.answer);
      // Its first answer died with an earlier process: the order it created, as it is now.
      else res.status(201).json(toWire(pedidos.getPedido(existing.pedidoId) as Pedido));
      return;
    }
    inProgress.add(key);
    try {
      const o = await pedidos.createPedido(input, { key, fingerprint });
      const answer = answerOf(o);
      try {
        pedidos.saveAnswer(key, answer.status, answer.body);
      } catch (error) {
        // The order and its key are saved; a repeat gets the order as it is then. A failure
        // here (a full disk) must not tell this client that nothing was saved.
        log.warn("the answer of a keyed request could not be kept", { error: String(error) });
      }
      if (o.outcome === "not-announced") throw failure(o);
      res.status(answer.status).json(answer.body);
    } finally {
      inProgress.delete(key);
    }
  });

  app.get("/pedidos", (req, res) => {
    const { limite } = validate(PedidosQuerySchema, req.query);
    res.json(
      pedidos.listPedidos(limite ? Number(limite) : PEDIDOS_LIST_LIMITS.default).map(toWire),
    );
  });

  app.get("/pedidos/:id", (req, res) => {
    const id = Number(req.params.id);
    const pedido = Number.isSafeInteger(id) && id > 0 ? pedidos.getPedido(id) : null;
    if (!pedido) throw notFound(`order ${req.params.id}`);
    res.json(toWire(pedido));
  });

  app.get("/pedidos/:id/historico", (req, res) => {
    const id = Number(req.params.id);
    const historico = Number.isSafeInteger(id) && id > 0 ? pedidos.getHistorico(id) : null;
    if (!historico) throw notFound(`order ${req.params.id}`);
    res.json(historico);
  });

  app.get("/plataforma", async (_req, res) => {
    if (!plataforma)
      throw new AppError("sem-kafka", "the synchronous configuration does not use Kafka", 404);
    res.json({ ...(await plataforma()), outbox: outbox?.() ?? null });
  });

  app.get("/plataforma/mortas/:topico", async (req, res) => {
    const letters = cartas?.(req.params.topico) ?? null;
    if (!letters) {
      throw notFound(
        `dead-letter topic ${req.params.topico}`,
        "Não há tópico de cartas mortas da loja com esse nome.",
      );
    }
    res.json(await letters);
  });

  app.get("/saude", (_req, res) => {
    res.json({
      status: "ok",
      modo,
      outbox: outbox?.() ?? null,
      particoesPresas: stuckPartitions?.() ?? null,
    });
  });

  finishApp(app, API_PEDIDOS, log);
  return app;
}
