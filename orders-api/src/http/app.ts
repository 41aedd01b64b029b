import {
  API_PEDIDOS,
  type DeadLetter,
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
import type { Express, Request, Response } from "express";
import type { Pedido } from "../domain/pedido.ts";
import {
  type CreateOutcome,
  getHistorico,
  getPedido,
  listPedidos,
  type PedidoPorts,
  placePedido,
} from "../pedidos.ts";

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
  /** What the use cases of src/pedidos.ts run on. */
  pedidos: PedidoPorts;
  /** The outbox's state; null when the outbox is off. */
  outbox: (() => Promise<OutboxState>) | null;
  modo: Modo;
  /** The results consumer's stuck partitions; null without Kafka. */
  stuckPartitions: (() => StuckPartition[]) | null;
  /** The platform panel's data; null in the synchronous configuration (no Kafka). */
  plataforma: (() => Promise<Plataforma>) | null;
  /** A dead-letter topic's letters; null when the topic is not one of the shop's. */
  deadLetters: ((topic: string) => Promise<DeadLetter[]> | null) | null;
  frontOrigin: string;
  log: Logger;
}

/** The orders API: each route is one handler below, which parses, calls a use case, maps its outcome. */
export function createApp(deps: AppDeps): Express {
  const app = createHttpApp({ corsOrigin: deps.frontOrigin });
  app.post("/pedidos", (req, res) => postPedido(deps, req, res));
  app.get("/pedidos", (req, res) => getPedidos(deps, req, res));
  app.get("/pedidos/:id", (req, res) => getPedidoById(deps, req, res));
  app.get("/pedidos/:id/historico", (req, res) => getHistoricoById(deps, req, res));
  app.get("/plataforma", (req, res) => getPlataforma(deps, req, res));
  app.get("/plataforma/mortas/:topico", (req, res) => getDeadLetters(deps, req, res));
  app.get("/saude", (req, res) => getSaude(deps, req, res));
  finishApp(app, API_PEDIDOS, deps.log);
  return app;
}

/**
 * POST /pedidos, with an Idempotency-Key or without: the use case decides (PlaceOutcome);
 * here each outcome gets its answer.
 */
async function postPedido({ pedidos }: AppDeps, req: Request, res: Response) {
  const input = validate(NovoPedidoSchema, req.body);
  const key = validate(PedidoHeadersSchema, req.headers)[IDEMPOTENCY_KEY_HEADER];
  const o = await placePedido(pedidos, input, key, answerOf);
  switch (o.outcome) {
    case "created":
      if (o.answerJson !== undefined) res.status(201).type("json").send(o.answerJson);
      else res.status(201).json(toWire(o.pedido));
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
}

async function getPedidos({ pedidos }: AppDeps, req: Request, res: Response) {
  const { limite } = validate(PedidosQuerySchema, req.query);
  const list = await listPedidos(pedidos, limite ? Number(limite) : PEDIDOS_LIST_LIMITS.default);
  res.json(list.map(toWire));
}

/** The route's id, when it is one an order can have (a positive integer). */
function pedidoIdOf(req: Request): number | null {
  const id = Number(req.params.id);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

async function getPedidoById({ pedidos }: AppDeps, req: Request, res: Response) {
  const id = pedidoIdOf(req);
  const pedido = id ? await getPedido(pedidos, id) : null;
  if (!pedido) throw notFound(`order ${req.params.id}`);
  res.json(toWire(pedido));
}

async function getHistoricoById({ pedidos }: AppDeps, req: Request, res: Response) {
  const id = pedidoIdOf(req);
  const historico = id ? await getHistorico(pedidos, id) : null;
  if (!historico) throw notFound(`order ${req.params.id}`);
  res.json(historico);
}

/**
 * How long GET /plataforma waits for Kafka (a healthy read takes tens of milliseconds)
 * before it answers with what the orders database knows: the outbox, which is what rises
 * while Kafka is down, so that the page's picture shows it rise and drain (issue 56).
 */
export const PLATFORM_WAIT_MS = 2000;

async function getPlataforma({ plataforma, outbox }: AppDeps, _req: Request, res: Response) {
  if (!plataforma)
    throw new AppError("sem-kafka", "the synchronous configuration does not use Kafka", 404);
  const pending = (await outbox?.()) ?? null;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Kafka did not answer in ${PLATFORM_WAIT_MS} ms`)),
      PLATFORM_WAIT_MS,
    );
  });
  try {
    res.json({ ...(await Promise.race([plataforma(), waited])), outbox: pending });
  } catch (error) {
    res.json({
      topicos: [],
      grupos: [],
      outbox: pending,
      indisponivel: error instanceof Error ? error.message : String(error),
      lidoEm: new Date().toISOString(),
    } satisfies Plataforma);
  } finally {
    clearTimeout(timer);
  }
}

async function getDeadLetters({ deadLetters }: AppDeps, req: Request, res: Response) {
  const topic = req.params.topico as string;
  const letters = deadLetters?.(topic) ?? null;
  if (!letters) {
    throw notFound(
      `dead-letter topic ${topic}`,
      "Não há tópico de cartas mortas da loja com esse nome.",
    );
  }
  res.json(await letters);
}

async function getSaude({ modo, outbox, stuckPartitions }: AppDeps, _req: Request, res: Response) {
  res.json({
    status: "ok",
    modo,
    outbox: (await outbox?.()) ?? null,
    particoesPresas: stuckPartitions?.() ?? null,
  });
}
