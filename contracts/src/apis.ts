import { z } from "zod";
import {
  DecisaoBrokerSchema,
  ItemSchema,
  NovoPedidoBrokerSchema,
  PagamentoAceiteSchema,
  PagamentoConcluidoSchema,
  PagamentoRequestSchema,
  PedidoBrokerSchema,
  SaudeBrokerSchema,
} from "./broker.ts";
import {
  DecisaoSincronaSchema,
  IDEMPOTENCY_KEY_HEADER,
  NovoPedidoSchema,
  PagamentoSincronoSchema,
  PEDIDOS_LIST_LIMITS,
  PedidoHeadersSchema,
  PedidoSchema,
  PedidosQuerySchema,
  PlataformaSchema,
  ProcessadoSchema,
  SaudePagamentosSchema,
  SaudePedidosSchema,
} from "./event-log.ts";
import { type ApiInfo, ErrorSchema, type RouteSpec } from "./openapi.ts";

/** One step of a timeline: what happened, when, and where (partition, offset, instance...). */
export const EtapaSchema = z.object({
  etapa: z.string(),
  em: z.string(),
  detalhes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
export type Etapa = z.output<typeof EtapaSchema>;

/** GET /pedidos/{id}/historico, event-log edition. */
export const HistoricoSchema = z.object({
  pedidoId: z.number().int(),
  etapas: z.array(EtapaSchema),
});
export type Historico = z.output<typeof HistoricoSchema>;

/** GET /pedidos/{id}/historico, broker edition: one timeline per payment request. */
export const HistoricoBrokerSchema = z.object({
  pedidoId: z.string(),
  solicitacoes: z.array(z.object({ solicitacaoId: z.string(), etapas: z.array(EtapaSchema) })),
});
export type HistoricoBroker = z.output<typeof HistoricoBrokerSchema>;

const naoHa = (o_que: string) => ({ descricao: `${o_que} does not exist`, esquema: ErrorSchema });

/** Every API serves these: its metrics and its own documentation. */
const operacao: RouteSpec[] = [
  {
    metodo: "get",
    caminho: "/metrics",
    resumo: "Prometheus metrics (text exposition format)",
    respostas: { 200: { descricao: "the metrics", tipo: "text/plain" } },
  },
  {
    metodo: "get",
    caminho: "/openapi.json",
    resumo: "This document",
    respostas: { 200: { descricao: "OpenAPI 3.1", tipo: "application/json" } },
  },
  {
    metodo: "get",
    caminho: "/docs",
    resumo: "This document as a page to read",
    respostas: { 200: { descricao: "HTML", tipo: "text/html" } },
  },
];

export const API_PEDIDOS: ApiInfo = {
  titulo: "Orders API (event-log edition)",
  descricao:
    "Creates orders and publishes PedidoCriado to Kafka through an outbox; applies ResultadoPagamento idempotently.",
  rotas: [
    {
      metodo: "post",
      caminho: "/pedidos",
      resumo: "Create an order; answers once Kafka acknowledged its PedidoCriado event",
      corpo: NovoPedidoSchema,
      cabecalhos: {
        "Idempotency-Key": {
          esquema: PedidoHeadersSchema.shape[IDEMPOTENCY_KEY_HEADER],
          descricao:
            "optional; the same key with the same body gets the first answer again (status and body, with Idempotent-Replayed: true) and creates nothing; kept 48 h",
        },
      },
      respostas: {
        409: {
          descricao: "a request with this Idempotency-Key is still being answered",
          esquema: ErrorSchema,
        },
        422: {
          descricao: "this Idempotency-Key was already used with a different body",
          esquema: ErrorSchema,
        },
        201: {
          descricao: "the order, AGUARDANDO_PAGAMENTO (or decided, synchronous configuration)",
          esquema: PedidoSchema,
        },
        500: {
          descricao:
            "the order was saved but its event was not acknowledged within 5 s (the outbox keeps trying), or payments failed (synchronous configuration)",
          esquema: ErrorSchema,
        },
      },
    },
    {
      metodo: "get",
      caminho: "/pedidos",
      resumo: "Orders, newest first",
      query: {
        limite: {
          esquema: PedidosQuerySchema.shape.limite,
          descricao: `how many, a whole number from 1 to ${PEDIDOS_LIST_LIMITS.maximo} (default ${PEDIDOS_LIST_LIMITS.padrao}); anything else is 400`,
        },
      },
      respostas: { 200: { descricao: "the orders", esquema: z.array(PedidoSchema) } },
    },
    {
      metodo: "get",
      caminho: "/pedidos/{id}",
      resumo: "One order",
      respostas: {
        200: { descricao: "the order", esquema: PedidoSchema },
        404: naoHa("the order"),
      },
    },
    {
      metodo: "get",
      caminho: "/pedidos/{id}/historico",
      resumo:
        "The order's timeline: created, event acknowledged (partition, offset), decided (instance, partition, offset), result applied",
      respostas: {
        200: { descricao: "the timeline, oldest step first", esquema: HistoricoSchema },
        404: naoHa("the order"),
      },
    },
    {
      metodo: "get",
      caminho: "/plataforma",
      resumo: "Topics, partitions, end offsets, groups, members and lag; the outbox",
      respostas: {
        200: { descricao: "the platform now", esquema: PlataformaSchema },
        404: {
          descricao: "the synchronous configuration does not use Kafka",
          esquema: ErrorSchema,
        },
      },
    },
    {
      metodo: "get",
      caminho: "/saude",
      resumo: "Health, configuration and outbox",
      respostas: { 200: { descricao: "alive", esquema: SaudePedidosSchema } },
    },
    ...operacao,
  ],
};

export const API_PAGAMENTOS: ApiInfo = {
  titulo: "Payments instance (event-log edition)",
  descricao:
    "Consumes PedidoCriado in the pagamentos group, decides after TEMPO_DECISAO_MS and publishes ResultadoPagamento. HTTP is for looking, and for the synchronous configuration.",
  rotas: [
    {
      metodo: "get",
      caminho: "/saude",
      resumo: "Health, instance and the partitions it holds",
      respostas: { 200: { descricao: "alive", esquema: SaudePagamentosSchema } },
    },
    {
      metodo: "get",
      caminho: "/pagamentos",
      resumo: "The last decisions of this instance, newest first",
      respostas: { 200: { descricao: "decisions", esquema: z.array(ProcessadoSchema) } },
    },
    {
      metodo: "post",
      caminho: "/pagamentos",
      resumo: "Decide one payment at once (synchronous configuration only)",
      corpo: PagamentoSincronoSchema,
      respostas: {
        200: { descricao: "the decision", esquema: DecisaoSincronaSchema },
        404: { descricao: "not the synchronous configuration", esquema: ErrorSchema },
      },
    },
    ...operacao,
  ],
};

export const API_PEDIDOS_BROKER: ApiInfo = {
  titulo: "Orders service (broker edition)",
  descricao:
    "Orders and payment requests; publishes SolicitacaoPagamento with publisher confirms and mandatory routing, applies PagamentoProcessado idempotently.",
  rotas: [
    {
      metodo: "post",
      caminho: "/pedidos",
      resumo: "Create an order with items",
      corpo: NovoPedidoBrokerSchema,
      respostas: { 201: { descricao: "the order, ABERTO", esquema: PedidoBrokerSchema } },
    },
    {
      metodo: "get",
      caminho: "/pedidos/{id}",
      resumo: "One order",
      respostas: {
        200: { descricao: "the order", esquema: PedidoBrokerSchema },
        404: naoHa("the order"),
      },
    },
    {
      metodo: "get",
      caminho: "/pedidos/{id}/historico",
      resumo:
        "Each payment request's timeline: record stored, publish confirmed, decision stored, result applied",
      respostas: {
        200: { descricao: "the timelines, oldest request first", esquema: HistoricoBrokerSchema },
        404: naoHa("the order"),
      },
    },
    {
      metodo: "post",
      caminho: "/pedidos/{id}/itens",
      resumo: "Add an item while the order is ABERTO",
      corpo: ItemSchema,
      respostas: {
        200: { descricao: "the order with its new total", esquema: PedidoBrokerSchema },
        404: naoHa("the order"),
        409: { descricao: "the order is EM_PAGAMENTO or PAGO", esquema: ErrorSchema },
      },
    },
    {
      metodo: "post",
      caminho: "/pedidos/{id}/pagamentos",
      resumo: "Ask for the order's payment, idempotent by solicitacaoId",
      corpo: PagamentoRequestSchema,
      respostas: {
        202: {
          descricao: "accepted (published and confirmed), not paid",
          esquema: PagamentoAceiteSchema,
        },
        200: {
          descricao: "a concluded request repeated: its stored result",
          esquema: PagamentoConcluidoSchema,
        },
        404: naoHa("the order"),
        409: {
          descricao:
            "the same key with other content, a new key while EM_PAGAMENTO, or a PAGO order",
          esquema: ErrorSchema,
        },
        503: {
          descricao:
            "not confirmed in time, returned unrouted, or RabbitMQ down: the key stays PENDENTE, repeat the same request",
          esquema: ErrorSchema,
        },
      },
    },
    ...operacao,
  ],
};

export const API_PAGAMENTOS_BROKER: ApiInfo = {
  titulo: "Payments service (broker edition)",
  descricao:
    "Consumes SolicitacaoPagamento, stores one decision per solicitacaoId and publishes PagamentoProcessado. HTTP is only for looking.",
  rotas: [
    {
      metodo: "get",
      caminho: "/saude",
      resumo: "Health and the RabbitMQ connection",
      respostas: { 200: { descricao: "alive", esquema: SaudeBrokerSchema } },
    },
    {
      metodo: "get",
      caminho: "/decisoes",
      resumo: "The stored decisions, newest first",
      respostas: { 200: { descricao: "decisions", esquema: z.array(DecisaoBrokerSchema) } },
    },
    ...operacao,
  ],
};
