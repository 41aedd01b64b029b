import { z } from "zod";
import { positiveValor, totalInRange } from "./money.ts";
import { freeText, TEXT_LIMITS } from "./text.ts";
import { defineMessage } from "./versao.ts";

/** Contracts of the broker (RabbitMQ) edition. */

const uuid = z.uuid({ error: "must be a UUID" });
const nonBlankText = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, { error: "must not be blank" });

export const CENARIOS = ["APROVAR", "RECUSAR"] as const;
export const CenarioSchema = z.enum(CENARIOS, { error: "must be APROVAR or RECUSAR" });
export type Cenario = z.output<typeof CenarioSchema>;

export const STATUS_PEDIDO_BROKER = ["ABERTO", "EM_PAGAMENTO", "PAGO"] as const;
export type StatusPedidoBroker = (typeof STATUS_PEDIDO_BROKER)[number];

// --- HTTP ---------------------------------------------------------------------------

/**
 * An item (POST /pedidos, POST /pedidos/{id}/itens). Its line, quantidade × precoUnitario,
 * stays in the money range; so does the order's total (checked with the whole order).
 */
export const ItemSchema = z
  .strictObject({
    sku: freeText(TEXT_LIMITS.sku),
    quantidade: z
      .number({ error: "must be a number" })
      .int({ error: "must be an integer" })
      .min(1, { error: "must be at least 1" })
      .max(1_000_000, { error: "must be at most 1000000" }),
    precoUnitario: positiveValor,
  })
  .superRefine(totalInRange((i) => [i], "precoUnitario", "quantidade × precoUnitario"));
export type Item = z.output<typeof ItemSchema>;

/** POST /pedidos body: the order's total stays in the money range, or 400 naming itens. */
export const NovoPedidoBrokerSchema = z
  .strictObject({
    clienteId: freeText(TEXT_LIMITS.clienteId),
    itens: z
      .array(ItemSchema, { error: "must be a list of items" })
      .min(1, { error: "must have at least one item" }),
  })
  .superRefine(
    totalInRange((p) => (Array.isArray(p.itens) ? p.itens : null), "itens", "the order's total"),
  );
export type NovoPedidoBroker = z.output<typeof NovoPedidoBrokerSchema>;

/** POST /pedidos/{pedidoId}/pagamentos body. No amount: it is read from the order. */
export const PagamentoRequestSchema = z.strictObject({
  solicitacaoId: uuid,
  cenario: CenarioSchema,
});
export type PagamentoRequest = z.output<typeof PagamentoRequestSchema>;

/** An order as the orders service returns it. */
export const PedidoBrokerSchema = z.object({
  id: uuid,
  clienteId: z.string(),
  status: z.enum(STATUS_PEDIDO_BROKER),
  total: positiveValor,
  itens: z.array(
    z.object({ sku: z.string(), quantidade: z.number().int(), precoUnitario: positiveValor }),
  ),
});

/** 202: the request is stored and its message confirmed by the broker; not paid yet. */
export const PagamentoAceiteSchema = z.object({
  solicitacaoId: uuid,
  pedidoId: uuid,
  valor: positiveValor,
  cenario: CenarioSchema,
  estado: z.literal("PENDENTE"),
  motivo: z.null(),
});

/** 200: a concluded request repeated; its stored result (`estado` and `aprovado` agree). */
export const PagamentoConcluidoSchema = z.object({
  solicitacaoId: uuid,
  pedidoId: uuid,
  valor: positiveValor,
  cenario: CenarioSchema,
  estado: z.enum(["APROVADO", "RECUSADO"]),
  aprovado: z.boolean(),
  motivo: z.string().nullable(),
});

/** GET /saude of the broker edition's payments service. */
export const SaudeBrokerSchema = z.object({
  status: z.literal("ok"),
  rabbitmq: z.enum(["connected", "disconnected"]),
});

/** One stored decision of the broker edition's payments service (GET /decisoes). */
export const DecisaoBrokerSchema = z.object({
  solicitacaoId: uuid,
  pedidoId: uuid,
  valor: positiveValor,
  cenario: CenarioSchema,
  aprovado: z.boolean(),
  motivo: z.string(),
  decididaEm: z.string(),
});

// --- Messages -----------------------------------------------------------------------

export const SolicitacaoPagamentoV1 = z.object({
  versao: z.literal(1),
  solicitacaoId: uuid,
  pedidoId: uuid,
  valor: positiveValor,
  cenario: CenarioSchema,
});
export type SolicitacaoPagamento = z.output<typeof SolicitacaoPagamentoV1>;
export const SolicitacaoPagamento = defineMessage("SolicitacaoPagamento", {
  1: SolicitacaoPagamentoV1,
});

export const PagamentoProcessadoV1 = z.object({
  versao: z.literal(1),
  solicitacaoId: uuid,
  pedidoId: uuid,
  valor: positiveValor,
  aprovado: z.boolean({ error: "must be true or false" }),
  motivo: nonBlankText,
});
export type PagamentoProcessado = z.output<typeof PagamentoProcessadoV1>;
export const PagamentoProcessado = defineMessage("PagamentoProcessado", {
  1: PagamentoProcessadoV1,
});

/**
 * The RabbitMQ side of the platform panel (GET /plataforma of the broker edition's orders
 * service), read from the management API: the cluster's nodes and whether each runs, and
 * per queue of the shop its type, leader, members and the members online, what waits in
 * it, the exchanges bound to it and where it dead-letters.
 */
export const PlataformaBrokerSchema = z.object({
  nos: z.array(z.object({ nome: z.string(), ativo: z.boolean() })),
  filas: z.array(
    z.object({
      nome: z.string(),
      tipo: z.string(),
      /** The node leading a quorum queue (a classic queue's node); null: no leader now. */
      lider: z.string().nullable(),
      membros: z.array(z.string()),
      emLinha: z.array(z.string()),
      mensagens: z.number().int().nullable(),
      /** Of them, waiting for a consumer (ready) and delivered, not yet acked (unacked). */
      prontas: z.number().int().nullable().optional(),
      semAck: z.number().int().nullable().optional(),
      /** Consumers attached now (the services' own). */
      consumidores: z.number().int().nullable().optional(),
      /**
       * The exchanges that route to this queue, each with its type and binding key (the
       * default exchange, which reaches every queue by its name, left out).
       */
      de: z
        .array(z.object({ exchange: z.string(), tipo: z.string(), chave: z.string() }))
        .optional(),
      /** Where RabbitMQ dead-letters its messages: x-dead-letter-routing-key, if any. */
      cartasMortasPara: z.string().nullable().optional(),
      /** x-delivery-limit: deliveries a message may fail before it is dead-lettered. */
      limiteDeEntregas: z.number().int().nullable().optional(),
    }),
  ),
  /** The management API that answered (the first of BROKER_PANEL_URL that did). */
  lidoDe: z.string(),
  lidoEm: z.string(),
});
export type PlataformaBroker = z.output<typeof PlataformaBrokerSchema>;
