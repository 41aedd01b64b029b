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
  PedidoSchema,
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

/** The contract's fields, in its order: the JSON's keys come out in this order, as before. */
const WIRE_FIELDS = Object.keys(PedidoSchema.shape) as (keyof PedidoWire)[];

/** An order as the API returns it: the domain's order, its cents as the contract's valor. */
export function toWire(p: Pedido): PedidoWire {
  const wire: Record<string, unknown> = {};
  for (const field of WIRE_FIELDS)
    wire[field] = field === "valor" ? fromCents(p.valorCentavos) : p[field];
  return wire as PedidoWire;
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
  outbox: (() => Promise<OutboxState>) | null;
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

  /**
   * POST /pedidos, with an Idempotency-Key or without: the use case decides (PlaceOutcome);
   * here each outcome gets its answer.
   */
  app.post("/pedidos", async (req, res) => {
    const input = validate(NovoPedidoSchema, req.body);
    const key = validate(PedidoHeadersSchema, req.headers)[IDEMPOTENCY_KEY_HEADER];
    const o = await pedidos.placePedido(input, key, answerOf);
    switch (o.outcome) {
      case "created":
        res.status(201).json(toWire(o.pedido));
        return;
      case "not-announced":
        throw failure(o);
      case "replayed":
        res.set("Idempotent-Replayed", "true").status(o.answer.status).json(o.answer.body);
        return;
      case "key-reused":
        throw new AppError(
          "chave-reutilizada",
          "this Idempotency-Key was already used with a different body; use a new key for a new order",
          422,
        );
      case "key-in-progress":
        throw new AppError(
          "chave-em-curso",
          "a request with this Idempotency-Key is still being answered; repeat it in a moment",
          409,
        );
    }
  });

  app.get("/pedidos", async (req, res) => {
    const { limite } = validate(PedidosQuerySchema, req.query);
    const list = await pedidos.listPedidos(limite ? Number(limite) : PEDIDOS_LIST_LIMITS.default);
    res.json(list.map(toWire));
  });

  app.get("/pedidos/:id", async (req, res) => {
    const id = Number(req.params.id);
    const pedido = Number.isSafeInteger(id) && id > 0 ? await pedidos.getPedido(id) : null;
    if (!pedido) throw notFound(`order ${req.params.id}`);
    res.json(toWire(pedido));
  });

  app.get("/pedidos/:id/historico", async (req, res) => {
    const id = Number(req.params.id);
    const historico = Number.isSafeInteger(id) && id > 0 ? await pedidos.getHistorico(id) : null;
    if (!historico) throw notFound(`order ${req.params.id}`);
    res.json(historico);
  });

  app.get("/plataforma", async (_req, res) => {
    if (!plataforma)
      throw new AppError("sem-kafka", "the synchronous configuration does not use Kafka", 404);
    res.json({ ...(await plataforma()), outbox: (await outbox?.()) ?? null });
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

  app.get("/saude", async (_req, res) => {
    res.json({
      status: "ok",
      modo,
      outbox: (await outbox?.()) ?? null,
      particoesPresas: stuckPartitions?.() ?? null,
    });
  });

  finishApp(app, API_PEDIDOS, log);
  return app;
}
