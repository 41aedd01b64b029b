import { z } from "zod";
import { totalNoLimite, valorPositivo } from "./money.ts";
import { LIMITES_DE_TEXTO, textoLivre } from "./texto.ts";
import { defineMessage } from "./versao.ts";

/** Contracts of the event-log (Kafka) edition. */

const textoNaoVazio = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, { error: "must not be blank" });
const instanteUtc = z.iso.datetime({ offset: false, error: "must be an ISO 8601 UTC timestamp" });
export const pedidoIdNumerico = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .positive({ error: "must be positive" });
export const quantidadePedido = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .min(1, { error: "must be at least 1" })
  .max(50, { error: "must be at most 50" });

export const STATUS_PEDIDO = ["AGUARDANDO_PAGAMENTO", "PAGO", "RECUSADO"] as const;
export type StatusPedido = (typeof STATUS_PEDIDO)[number];

export const STATUS_PAGAMENTO = ["APROVADO", "RECUSADO"] as const;
export type StatusPagamento = (typeof STATUS_PAGAMENTO)[number];

/** The refusal reason the payments component gives above the limit. */
export const MOTIVO_LIMITE = "limite do cartão de teste";

// --- HTTP ---------------------------------------------------------------------------

const cliente = textoLivre(LIMITES_DE_TEXTO.cliente);
const item = textoLivre(LIMITES_DE_TEXTO.item);

/**
 * POST /pedidos body. The client never sends the total, and the total the server computes
 * (quantidade × precoUnitario) stays in the money range, so that the order's event can
 * carry it: a larger one is a 400 naming precoUnitario.
 */
export const NovoPedidoSchema = z
  .strictObject({
    cliente,
    item,
    quantidade: quantidadePedido,
    precoUnitario: valorPositivo,
  })
  .superRefine(totalNoLimite((p) => [p], "precoUnitario", "quantidade × precoUnitario"));
export type NovoPedido = z.output<typeof NovoPedidoSchema>;

/**
 * The Idempotency-Key request header of POST /pedidos (IETF httpapi draft): 1 to 255
 * visible ASCII characters, a UUID for instance. Validated with the other headers.
 */
export const CHAVE_DE_IDEMPOTENCIA = "idempotency-key";
export const CabecalhosDoPedidoSchema = z.object({
  [CHAVE_DE_IDEMPOTENCIA]: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, {
      error: "must be 1 to 255 visible ASCII characters, given once (a UUID, say)",
    })
    .optional(),
});

/** GET /pedidos: how many orders, newest first. */
export const LISTA_DE_PEDIDOS = { padrao: 500, maximo: 5000 } as const;
const limiteDaLista = z
  .string({ error: "must be given once" })
  .regex(/^[0-9]{1,4}$/, { error: `must be a whole number from 1 to ${LISTA_DE_PEDIDOS.maximo}` })
  .refine((s) => Number(s) >= 1 && Number(s) <= LISTA_DE_PEDIDOS.maximo, {
    error: `must be a whole number from 1 to ${LISTA_DE_PEDIDOS.maximo}`,
  });
/** The query of GET /pedidos; other parameters are ignored. */
export const ConsultaPedidosSchema = z.object({ limite: limiteDaLista.optional() });

/** An order as the orders API returns it. */
export const PedidoSchema = z.object({
  id: pedidoIdNumerico,
  cliente: z.string(),
  item: z.string(),
  quantidade: quantidadePedido,
  valor: valorPositivo,
  status: z.enum(STATUS_PEDIDO),
  motivo: z.string().nullable(),
  processadoPor: z.string().nullable(),
  criadoEm: instanteUtc,
});
export type Pedido = z.output<typeof PedidoSchema>;

/** POST /pagamentos body, synchronous configuration only. */
export const PagamentoSincronoSchema = z.strictObject({
  pedidoId: pedidoIdNumerico,
  valor: valorPositivo,
});
export type PagamentoSincrono = z.output<typeof PagamentoSincronoSchema>;

/** POST /pagamentos answer, synchronous configuration only. */
export const DecisaoSincronaSchema = z.object({
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: textoNaoVazio,
});
export type DecisaoSincrona = z.output<typeof DecisaoSincronaSchema>;

// --- Events -------------------------------------------------------------------------

export const PedidoCriadoV1 = z.object({
  versao: z.literal(1),
  pedidoId: pedidoIdNumerico,
  cliente,
  item,
  quantidade: quantidadePedido,
  valor: valorPositivo,
  criadoEm: instanteUtc,
});
export type PedidoCriado = z.output<typeof PedidoCriadoV1>;
export const PedidoCriado = defineMessage("PedidoCriado", { 1: PedidoCriadoV1 });

export const ResultadoPagamentoV1 = z.object({
  versao: z.literal(1),
  pedidoId: pedidoIdNumerico,
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: textoNaoVazio,
  processadoEm: instanteUtc,
});
export type ResultadoPagamento = z.output<typeof ResultadoPagamentoV1>;
export const ResultadoPagamento = defineMessage("ResultadoPagamento", { 1: ResultadoPagamentoV1 });

/** Record key on both topics: the pedidoId as text. */
export function chaveDoPedido(pedidoId: number): string {
  return String(pedidoId);
}

// --- GET /plataforma (orders API, for the web panel) ----------------------------------

export const ParticaoDoTopicoSchema = z.object({
  partition: z.number().int(),
  endOffset: z.number().int(),
  /** Each reading group's committed offset (null: none yet) and lag on this partition. */
  grupos: z.array(
    z.object({
      grupo: z.string(),
      committedOffset: z.number().int().nullable(),
      lag: z.number().int(),
    }),
  ),
});
export type ParticaoDoTopico = z.output<typeof ParticaoDoTopicoSchema>;

const ParticoesSchema = z.record(z.string(), z.array(z.number().int()));

export const MembroDoGrupoSchema = z.object({
  memberId: z.string(),
  clientId: z.string(),
  host: z.string(),
  particoes: ParticoesSchema,
});
export type MembroDoGrupo = z.output<typeof MembroDoGrupoSchema>;

/** The orders API's outbox: events saved with their order and not yet acknowledged by Kafka. */
export const EstadoOutboxSchema = z.object({
  pendentes: z.number().int(),
  maisAntigoEm: z.string().nullable(),
  idadeMaisAntigoMs: z.number(),
  /** Events Kafka refused for good (too large, say): set aside with why; the rest went on. */
  postosDeLado: z.array(
    z.object({ pedidoId: z.number().int(), em: z.string(), motivo: z.string() }),
  ),
});
export type EstadoOutbox = z.output<typeof EstadoOutboxSchema>;

export const PlataformaSchema = z.object({
  topicos: z.array(z.object({ topic: z.string(), particoes: z.array(ParticaoDoTopicoSchema) })),
  grupos: z.array(
    z.object({ grupo: z.string(), estado: z.string(), membros: z.array(MembroDoGrupoSchema) }),
  ),
  /** Null when the outbox is off. */
  outbox: EstadoOutboxSchema.nullable().optional(),
  lidoEm: z.string(),
});
export type Plataforma = z.output<typeof PlataformaSchema>;

/** The event-log edition's configurations (MODO): events on Kafka, or the earlier HTTP call. */
export const MODOS = ["eventos", "sincrono"] as const;
export type Modo = (typeof MODOS)[number];

/** A partition whose current record keeps failing: tried again with backoff, named here. */
export const ParticaoPresaSchema = z.object({
  topic: z.string(),
  partition: z.number().int(),
  offset: z.string(),
  tentativas: z.number().int(),
  ultimoErro: z.string(),
  desde: z.string(),
});

export type ParticaoPresa = z.output<typeof ParticaoPresaSchema>;

/** GET /saude of the orders API. */
export const SaudeDoPedidosSchema = z.object({
  status: z.literal("ok"),
  modo: z.enum(MODOS),
  outbox: EstadoOutboxSchema.nullable(),
  /** The results consumer's stuck partitions (empty when none; null without Kafka). */
  particoesPresas: z.array(ParticaoPresaSchema).nullable(),
});

/** GET /saude of a payments instance. */
export const SaudeDoPagamentosSchema = z.object({
  status: z.literal("ok"),
  instancia: z.string(),
  modo: z.enum(MODOS),
  consumidor: z
    .object({
      conectado: z.boolean(),
      grupo: z.string(),
      particoes: ParticoesSchema,
      presas: z.array(ParticaoPresaSchema),
    })
    .nullable(),
});

/** One decision a payments instance took, for GET /pagamentos. */
export const ProcessadoSchema = z.object({
  pedidoId: pedidoIdNumerico,
  valor: valorPositivo,
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: z.string(),
  processadoEm: z.string(),
  origem: z.enum(["kafka", "http"]),
  particao: z.number().int().optional(),
  offset: z.string().optional(),
});
export type Processado = z.output<typeof ProcessadoSchema>;
