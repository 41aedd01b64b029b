import { z } from "zod";
import {
  DecisaoBrokerSchema,
  ItemSchema,
  NovoPedidoBrokerSchema,
  PagamentoAceiteSchema,
  PagamentoConcluidoSchema,
  PagamentoRequestSchema,
  PedidoBrokerSchema,
  PlataformaBrokerSchema,
  SaudeBrokerSchema,
} from "./broker.ts";
import {
  DeadLetterSchema,
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

const noneSuch = (what: string) => ({ description: `${what} does not exist`, schema: ErrorSchema });

/** Every API serves these: its metrics and its own documentation. */
const operation: RouteSpec[] = [
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (text exposition format)",
    responses: { 200: { description: "the metrics", contentType: "text/plain" } },
  },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    responses: { 200: { description: "OpenAPI 3.1", contentType: "application/json" } },
  },
  {
    method: "get",
    path: "/docs",
    summary: "This document as a page to read",
    responses: { 200: { description: "HTML", contentType: "text/html" } },
  },
];

/** GET /pedidos of both editions: the orders, newest first, as many as `limite` asks. */
const listOfPedidos = (pedido: z.ZodType) => ({
  method: "get" as const,
  path: "/pedidos",
  summary: "Orders, newest first",
  query: {
    limite: {
      schema: PedidosQuerySchema.shape.limite,
      description: `how many, a whole number from 1 to ${PEDIDOS_LIST_LIMITS.max} (default ${PEDIDOS_LIST_LIMITS.default}); anything else is 400`,
    },
  },
  responses: { 200: { description: "the orders", schema: z.array(pedido) } },
});

export const API_PEDIDOS: ApiInfo = {
  title: "Orders API (event-log edition)",
  description:
    "Creates orders and publishes PedidoCriado to Kafka through an outbox; applies ResultadoPagamento idempotently.",
  routes: [
    {
      method: "post",
      path: "/pedidos",
      summary: "Create an order; answers once Kafka acknowledged its PedidoCriado event",
      body: NovoPedidoSchema,
      headers: {
        "Idempotency-Key": {
          schema: PedidoHeadersSchema.shape[IDEMPOTENCY_KEY_HEADER],
          description:
            "optional; the same key with the same body gets the first answer again (status and body, with Idempotent-Replayed: true) and creates nothing; kept 48 h",
        },
      },
      responses: {
        409: {
          description: "a request with this Idempotency-Key is still being answered",
          schema: ErrorSchema,
        },
        422: {
          description: "this Idempotency-Key was already used with a different body",
          schema: ErrorSchema,
        },
        201: {
          description: "the order, AGUARDANDO_PAGAMENTO (or decided, synchronous configuration)",
          schema: PedidoSchema,
        },
        500: {
          description:
            "the order was saved but its event was not acknowledged within 5 s (the outbox keeps trying), or payments failed (synchronous configuration)",
          schema: ErrorSchema,
        },
      },
    },
    listOfPedidos(PedidoSchema),
    {
      method: "get",
      path: "/pedidos/{id}",
      summary: "One order",
      responses: {
        200: { description: "the order", schema: PedidoSchema },
        404: noneSuch("the order"),
      },
    },
    {
      method: "get",
      path: "/pedidos/{id}/historico",
      summary:
        "The order's timeline: created, event acknowledged (partition, offset), decided (instance, partition, offset), result applied",
      responses: {
        200: { description: "the timeline, oldest step first", schema: HistoricoSchema },
        404: noneSuch("the order"),
      },
    },
    {
      method: "get",
      path: "/plataforma",
      summary: "Topics, partitions, end offsets, groups, members and lag; the outbox",
      responses: {
        200: { description: "the platform now", schema: PlataformaSchema },
        404: {
          description: "the synchronous configuration does not use Kafka",
          schema: ErrorSchema,
        },
      },
    },
    {
      method: "get",
      path: "/plataforma/mortas/{topico}",
      summary: "A dead-letter topic's letters, read-only: where each failed, why and when",
      responses: {
        200: { description: "the letters, oldest first", schema: z.array(DeadLetterSchema) },
        404: noneSuch("a dead-letter topic of the shop by that name"),
      },
    },
    {
      method: "get",
      path: "/saude",
      summary: "Health, configuration and outbox",
      responses: { 200: { description: "alive", schema: SaudePedidosSchema } },
    },
    ...operation,
  ],
};

export const API_PAGAMENTOS: ApiInfo = {
  title: "Payments instance (event-log edition)",
  description:
    "Consumes PedidoCriado in the pagamentos group, decides after TEMPO_DECISAO_MS and publishes ResultadoPagamento. HTTP is for looking, and for the synchronous configuration.",
  routes: [
    {
      method: "get",
      path: "/saude",
      summary: "Health, instance and the partitions it holds",
      responses: { 200: { description: "alive", schema: SaudePagamentosSchema } },
    },
    {
      method: "get",
      path: "/pagamentos",
      summary: "The last decisions of this instance, newest first",
      responses: { 200: { description: "decisions", schema: z.array(ProcessadoSchema) } },
    },
    {
      method: "post",
      path: "/pagamentos",
      summary: "Decide one payment at once (synchronous configuration only)",
      body: PagamentoSincronoSchema,
      responses: {
        200: { description: "the decision", schema: DecisaoSincronaSchema },
        404: { description: "not the synchronous configuration", schema: ErrorSchema },
      },
    },
    ...operation,
  ],
};

export const API_PEDIDOS_BROKER: ApiInfo = {
  title: "Orders service (broker edition)",
  description:
    "Orders and payment requests; publishes SolicitacaoPagamento with publisher confirms and mandatory routing, applies PagamentoProcessado idempotently.",
  routes: [
    {
      method: "post",
      path: "/pedidos",
      summary: "Create an order with items",
      body: NovoPedidoBrokerSchema,
      responses: { 201: { description: "the order, ABERTO", schema: PedidoBrokerSchema } },
    },
    listOfPedidos(PedidoBrokerSchema),
    {
      method: "get",
      path: "/plataforma",
      summary:
        "The RabbitMQ cluster from its management API: nodes running, each queue's leader, members and members online",
      responses: {
        200: { description: "the broker now", schema: PlataformaBrokerSchema },
        503: {
          description:
            "no management API answered, or the monitoring user (BROKER_MONITOR_USER) is not set",
          schema: ErrorSchema,
        },
      },
    },
    {
      method: "get",
      path: "/pedidos/{id}",
      summary: "One order",
      responses: {
        200: { description: "the order", schema: PedidoBrokerSchema },
        404: noneSuch("the order"),
      },
    },
    {
      method: "get",
      path: "/pedidos/{id}/historico",
      summary:
        "Each payment request's timeline: record stored, publish confirmed, decision stored, result applied",
      responses: {
        200: { description: "the timelines, oldest request first", schema: HistoricoBrokerSchema },
        404: noneSuch("the order"),
      },
    },
    {
      method: "post",
      path: "/pedidos/{id}/itens",
      summary: "Add an item while the order is ABERTO",
      body: ItemSchema,
      responses: {
        200: { description: "the order with its new total", schema: PedidoBrokerSchema },
        404: noneSuch("the order"),
        409: { description: "the order is EM_PAGAMENTO or PAGO", schema: ErrorSchema },
      },
    },
    {
      method: "post",
      path: "/pedidos/{id}/pagamentos",
      summary: "Ask for the order's payment, idempotent by solicitacaoId",
      body: PagamentoRequestSchema,
      responses: {
        202: {
          description: "accepted (published and confirmed), not paid",
          schema: PagamentoAceiteSchema,
        },
        200: {
          description: "a concluded request repeated: its stored result",
          schema: PagamentoConcluidoSchema,
        },
        404: noneSuch("the order"),
        409: {
          description:
            "the same key with other content, a new key while EM_PAGAMENTO, or a PAGO order",
          schema: ErrorSchema,
        },
        503: {
          description:
            "not confirmed in time, returned unrouted, or RabbitMQ down: the key stays PENDENTE, repeat the same request",
          schema: z.object({
            erro: z.string(),
            mensagem: z.string(),
            solicitacaoId: z
              .uuid()
              .describe("the key that stays PENDENTE, to repeat the request with"),
          }),
        },
      },
    },
    ...operation,
  ],
};

export const API_PAGAMENTOS_BROKER: ApiInfo = {
  title: "Payments service (broker edition)",
  description:
    "Consumes SolicitacaoPagamento, stores one decision per solicitacaoId and publishes PagamentoProcessado. HTTP is only for looking.",
  routes: [
    {
      method: "get",
      path: "/saude",
      summary: "Health and the RabbitMQ connection",
      responses: { 200: { description: "alive", schema: SaudeBrokerSchema } },
    },
    {
      method: "get",
      path: "/decisoes",
      summary: "The stored decisions, newest first",
      responses: { 200: { description: "decisions", schema: z.array(DecisaoBrokerSchema) } },
    },
    ...operation,
  ],
};
