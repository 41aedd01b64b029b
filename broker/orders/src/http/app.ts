import {
  API_PEDIDOS_BROKER,
  fromCents,
  ItemSchema,
  NovoPedidoBrokerSchema,
  OUT_OF_RANGE,
  PagamentoRequestSchema,
  PEDIDOS_LIST_LIMITS,
  PedidosQuerySchema,
  type PlataformaBroker,
} from "@shop/contracts";
import { AppError, createHttpApp, finishApp, type Logger, notFound, validate } from "@shop/service";
import type { Express, Request, Response } from "express";
import { type Pedido, type Solicitacao, totalOf } from "../domain/pedido.ts";
import {
  addItem,
  createPedido,
  getHistorico,
  getPedido,
  listPedidos,
  type PaymentOutcome,
  type PedidoPorts,
  requestPagamento,
} from "../pedidos.ts";

export function toWire(p: Pedido) {
  return {
    id: p.id,
    clienteId: p.clienteId,
    status: p.status,
    total: fromCents(totalOf(p.itens)),
    itens: p.itens.map((i) => ({
      sku: i.sku,
      quantidade: i.quantidade,
      precoUnitario: fromCents(i.precoCentavos),
    })),
  };
}

const conflict = (o: { reason: string; mensagem: string }) =>
  new AppError("conflito", o.reason, 409, undefined, { mensagem: o.mensagem });

const unknownPedido = (id: string) => notFound(`order ${id}`, "Pedido não encontrado.");

const solicitacaoWire = (s: Solicitacao) => ({
  solicitacaoId: s.solicitacaoId,
  pedidoId: s.pedidoId,
  valor: fromCents(s.valorCentavos),
  cenario: s.cenario,
});

/** The one mapping of a payment request's outcome to its HTTP answer. */
function paymentAnswer(id: string, o: PaymentOutcome): { status: number; body: unknown } {
  switch (o.outcome) {
    case "accepted":
      return {
        status: 202,
        body: { ...solicitacaoWire(o.solicitacao), estado: "PENDENTE", motivo: null },
      };
    case "concluded":
      return {
        status: 200,
        body: {
          ...solicitacaoWire(o.solicitacao),
          estado: o.solicitacao.aprovado === true ? "APROVADO" : "RECUSADO",
          aprovado: o.solicitacao.aprovado === true,
          motivo: o.solicitacao.motivo,
        },
      };
    case "unknown-pedido":
      throw unknownPedido(id);
    case "conflict":
      throw conflict(o);
    case "not-published": {
      const reason = o.error instanceof Error ? o.error.message : String(o.error);
      throw new AppError(
        "publicacao-nao-confirmada",
        `the payment request was not accepted by the broker (${reason}); it stays PENDENTE: repeat the same request with the same solicitacaoId to recover`,
        503,
        undefined,
        {
          cause: o.error,
          mensagem:
            "O broker não confirmou a solicitação de pagamento; ela continua PENDENTE. Repita a mesma requisição, com o mesmo solicitacaoId.",
          body: { solicitacaoId: o.solicitacao.solicitacaoId },
        },
      );
    }
  }
}

export interface AppDeps {
  /** What the use cases of src/pedidos.ts run on. */
  pedidos: PedidoPorts;
  log: Logger;
  /** The RabbitMQ side of the platform panel (messaging/platform.ts). */
  plataforma: () => Promise<PlataformaBroker>;
  /** The web page's origin, allowed by CORS (its RabbitMQ panel reads /plataforma). */
  frontOrigin?: string;
}

/**
 * The broker edition's orders API: each route is one handler below, which parses, calls a
 * use case, maps its outcome. The old endpoint that took an approval from the client does
 * not exist.
 */
export function createApp(deps: AppDeps): Express {
  const app = createHttpApp(deps.frontOrigin ? { corsOrigin: deps.frontOrigin } : {});
  app.get("/plataforma", async (_req, res) => {
    res.json(await deps.plataforma());
  });
  app.post("/pedidos", (req, res) => postPedido(deps, req, res));
  app.get("/pedidos", (req, res) => getPedidos(deps, req, res));
  app.get("/pedidos/:id", (req, res) => {
    res.json(toWire(found(req.params.id, getPedido(deps.pedidos, req.params.id))));
  });
  app.get("/pedidos/:id/historico", (req, res) => {
    res.json(found(req.params.id, getHistorico(deps.pedidos, req.params.id)));
  });
  app.post("/pedidos/:id/itens", (req, res) => postItem(deps, req, res));
  app.post("/pedidos/:id/pagamentos", (req, res) => postPagamento(deps, req, res));
  finishApp(app, API_PEDIDOS_BROKER, deps.log);
  return app;
}

function found<T>(id: string, value: T | null): T {
  if (value === null) throw unknownPedido(id);
  return value;
}

async function postPedido({ pedidos }: AppDeps, req: Request, res: Response) {
  const pedido = await createPedido(pedidos, validate(NovoPedidoBrokerSchema, req.body));
  res.status(201).json(toWire(pedido));
}

function getPedidos({ pedidos }: AppDeps, req: Request, res: Response) {
  const { limite } = validate(PedidosQuerySchema, req.query);
  const limit = limite ? Number(limite) : PEDIDOS_LIST_LIMITS.default;
  res.json(listPedidos(pedidos, limit).map(toWire));
}

async function postItem({ pedidos }: AppDeps, req: Request, res: Response) {
  const id = req.params.id as string;
  const o = await addItem(pedidos, id, validate(ItemSchema, req.body));
  if (o.outcome === "unknown-pedido") throw unknownPedido(id);
  if (o.outcome === "conflict") throw conflict(o);
  if (o.outcome === "over-limit") {
    throw new AppError("entrada-invalida", "invalid input", 400, {
      precoUnitario: `with this item, the order's total ${OUT_OF_RANGE}`,
    });
  }
  res.json(toWire(o.pedido));
}

/** POST /pedidos/{pedidoId}/pagamentos: the use case (requestPagamento), its outcome answered by paymentAnswer. */
async function postPagamento({ pedidos }: AppDeps, req: Request, res: Response) {
  const id = req.params.id as string;
  const body = validate(PagamentoRequestSchema, req.body);
  const answer = paymentAnswer(id, await requestPagamento(pedidos, id, body));
  res.status(answer.status).json(answer.body);
}
