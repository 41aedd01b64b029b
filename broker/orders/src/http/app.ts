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
import type { Express } from "express";
import { type Pedido, type Solicitacao, totalOf } from "../domain/pedido.ts";
import type { PaymentOutcome, PedidoUseCases } from "../pedidos.ts";

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

/** The broker edition's orders API. The old endpoint that took an approval from the client does not exist. */
export function createApp({
  pedidos,
  log,
  plataforma,
  frontOrigin,
}: {
  pedidos: PedidoUseCases;
  log: Logger;
  /** The RabbitMQ side of the platform panel (messaging/platform.ts). */
  plataforma: () => Promise<PlataformaBroker>;
  /** The web page's origin, allowed by CORS (its RabbitMQ panel reads /plataforma). */
  frontOrigin?: string;
}): Express {
  const app = createHttpApp(frontOrigin ? { corsOrigin: frontOrigin } : {});

  app.get("/plataforma", async (_req, res) => {
    res.json(await plataforma());
  });
  const found = <T>(id: string, value: T | null): T => {
    if (value === null) throw unknownPedido(id);
    return value;
  };

  app.post("/pedidos", async (req, res) => {
    const pedido = await pedidos.createPedido(validate(NovoPedidoBrokerSchema, req.body));
    res.status(201).json(toWire(pedido));
  });

  app.get("/pedidos", (req, res) => {
    const { limite } = validate(PedidosQuerySchema, req.query);
    res.json(
      pedidos.listPedidos(limite ? Number(limite) : PEDIDOS_LIST_LIMITS.default).map(toWire),
    );
  });

  app.get("/pedidos/:id", (req, res) => {
    res.json(toWire(found(req.params.id, pedidos.getPedido(req.params.id))));
  });

  app.get("/pedidos/:id/historico", (req, res) => {
    res.json(found(req.params.id, pedidos.getHistorico(req.params.id)));
  });

  app.post("/pedidos/:id/itens", async (req, res) => {
    const o = await pedidos.addItem(req.params.id, validate(ItemSchema, req.body));
    if (o.outcome === "unknown-pedido") throw unknownPedido(req.params.id);
    if (o.outcome === "conflict") throw conflict(o);
    if (o.outcome === "over-limit") {
      throw new AppError("entrada-invalida", "invalid input", 400, {
        precoUnitario: `with this item, the order's total ${OUT_OF_RANGE}`,
      });
    }
    res.json(toWire(o.pedido));
  });

  app.post("/pedidos/:id/pagamentos", async (req, res) => {
    const body = validate(PagamentoRequestSchema, req.body);
    const answer = paymentAnswer(
      req.params.id,
      await pedidos.requestPagamento(req.params.id, body),
    );
    res.status(answer.status).json(answer.body);
  });

  finishApp(app, API_PEDIDOS_BROKER, log);
  return app;
}
