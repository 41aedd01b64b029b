import { z } from "zod";
import { isPositiveAmount, positiveValor, totalInRange } from "./money.ts";
import { freeText, isPlainText, TEXT_LIMITS } from "./text.ts";
import { defineMessage, type FastPath, quickYesOf } from "./versao.ts";

/** Contracts of the event-log (Kafka) edition. */

const nonBlankText = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, { error: "must not be blank" });
const utcInstant = z.iso.datetime({ offset: false, error: "must be an ISO 8601 UTC timestamp" });
export const numericPedidoId = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .positive({ error: "must be positive" });
export const quantidadeSchema = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .min(1, { error: "must be at least 1" })
  .max(50, { error: "must be at most 50" });

export const STATUS_PEDIDO = ["AGUARDANDO_PAGAMENTO", "PAGO", "RECUSADO"] as const;
export type StatusPedido = (typeof STATUS_PEDIDO)[number];

export const STATUS_PAGAMENTO = ["APROVADO", "RECUSADO"] as const;
export type StatusPagamento = (typeof STATUS_PAGAMENTO)[number];

/** The refusal reason the payments component gives above the limit. */
export const MOTIVO_OVER_LIMIT = "limite do cartão de teste";

// --- HTTP ---------------------------------------------------------------------------

const cliente = freeText(TEXT_LIMITS.cliente);
const item = freeText(TEXT_LIMITS.item);

/**
 * POST /pedidos body. The client never sends the total, and the total the server computes
 * (quantidade × precoUnitario) stays in the money range, so that the order's event can
 * carry it: a larger one is a 400 naming precoUnitario.
 */
export const NovoPedidoSchema = z
  .strictObject({
    cliente,
    item,
    quantidade: quantidadeSchema,
    precoUnitario: positiveValor,
  })
  .superRefine(totalInRange((p) => [p], "precoUnitario", "quantidade × precoUnitario"));
export type NovoPedido = z.output<typeof NovoPedidoSchema>;

/**
 * The Idempotency-Key request header of POST /pedidos (IETF httpapi draft): 1 to 255
 * visible ASCII characters, a UUID for instance. Validated with the other headers.
 */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
export const PedidoHeadersSchema = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, {
      error: "must be 1 to 255 visible ASCII characters, given once (a UUID, say)",
    })
    .optional(),
});

/** GET /pedidos: how many orders, newest first. */
export const PEDIDOS_LIST_LIMITS = { default: 500, max: 5000 } as const;
const listLimit = z
  .string({ error: "must be given once" })
  .regex(/^[0-9]{1,4}$/, {
    error: `must be a whole number from 1 to ${PEDIDOS_LIST_LIMITS.max}`,
  })
  .refine((s) => Number(s) >= 1 && Number(s) <= PEDIDOS_LIST_LIMITS.max, {
    error: `must be a whole number from 1 to ${PEDIDOS_LIST_LIMITS.max}`,
  });
/** The query of GET /pedidos; other parameters are ignored. */
export const PedidosQuerySchema = z.object({ limite: listLimit.optional() });

/** An order as the orders API returns it. */
export const PedidoSchema = z.object({
  id: numericPedidoId,
  cliente: z.string(),
  item: z.string(),
  quantidade: quantidadeSchema,
  valor: positiveValor,
  status: z.enum(STATUS_PEDIDO),
  motivo: z.string().nullable(),
  processadoPor: z.string().nullable(),
  criadoEm: utcInstant,
});
export type Pedido = z.output<typeof PedidoSchema>;

/** POST /pagamentos body, synchronous configuration only. */
export const PagamentoSincronoSchema = z.strictObject({
  pedidoId: numericPedidoId,
  valor: positiveValor,
});
export type PagamentoSincrono = z.output<typeof PagamentoSincronoSchema>;

/** POST /pagamentos answer, synchronous configuration only. */
export const DecisaoSincronaSchema = z.object({
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: nonBlankText,
});
export type DecisaoSincrona = z.output<typeof DecisaoSincronaSchema>;

// --- Events -------------------------------------------------------------------------

export const PedidoCriadoV1 = z.object({
  versao: z.literal(1),
  pedidoId: numericPedidoId,
  cliente,
  item,
  quantidade: quantidadeSchema,
  valor: positiveValor,
  criadoEm: utcInstant,
});
export type PedidoCriado = z.output<typeof PedidoCriadoV1>;

/** The UTC form the shop writes (toISOString: seconds, then any fraction, then Z). */
const PLAIN_UTC_INSTANT =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?Z$/;
const digit = (text: string, at: number) => text.charCodeAt(at) - 48;
/** utcInstant's calendar: a day the month has, 29 February in Gregorian leap years only. */
function dayExists(text: string): boolean {
  const day = digit(text, 8) * 10 + digit(text, 9);
  if (day <= 28) return true;
  const month = digit(text, 5) * 10 + digit(text, 6);
  if (month !== 2)
    return day <= (month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31);
  const year = digit(text, 0) * 1000 + digit(text, 1) * 100 + digit(text, 2) * 10 + digit(text, 3);
  return day === 29 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}
const isPlainInstant = (v: unknown): v is string =>
  typeof v === "string" && PLAIN_UTC_INSTANT.test(v) && dayExists(v);
const isWhole = (v: unknown, min: number, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
/** What nonBlankText keeps as it is: no space to trim at either end, not empty. */
const isTrimmedText = (v: unknown): v is string =>
  typeof v === "string" && v.length > 0 && v.trim() === v;

/** PedidoCriadoV1's quick yes (versao.ts, quickYesOf): one check per field of the schema. */
export const pedidoCriadoV1Fast: FastPath<PedidoCriado> = quickYesOf(PedidoCriadoV1, {
  versao: (v) => v === 1,
  pedidoId: (v) => isWhole(v, 1, Number.MAX_SAFE_INTEGER),
  cliente: (v) => isPlainText(v, TEXT_LIMITS.cliente),
  item: (v) => isPlainText(v, TEXT_LIMITS.item),
  quantidade: (v) => isWhole(v, 1, 50),
  valor: isPositiveAmount,
  criadoEm: isPlainInstant,
});
export const PedidoCriado = defineMessage(
  "PedidoCriado",
  { 1: PedidoCriadoV1 },
  { 1: pedidoCriadoV1Fast },
);

export const ResultadoPagamentoV1 = z.object({
  versao: z.literal(1),
  pedidoId: numericPedidoId,
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: nonBlankText,
  processadoEm: utcInstant,
});
export type ResultadoPagamento = z.output<typeof ResultadoPagamentoV1>;

const isStatusPagamento = (v: unknown): v is StatusPagamento =>
  (STATUS_PAGAMENTO as readonly unknown[]).includes(v);

/** ResultadoPagamentoV1's quick yes (versao.ts, quickYesOf): one check per field of the schema. */
export const resultadoPagamentoV1Fast: FastPath<ResultadoPagamento> = quickYesOf(
  ResultadoPagamentoV1,
  {
    versao: (v) => v === 1,
    pedidoId: (v) => isWhole(v, 1, Number.MAX_SAFE_INTEGER),
    status: isStatusPagamento,
    motivo: (v) => v === null || typeof v === "string",
    instancia: isTrimmedText,
    processadoEm: isPlainInstant,
  },
);
export const ResultadoPagamento = defineMessage(
  "ResultadoPagamento",
  { 1: ResultadoPagamentoV1 },
  { 1: resultadoPagamentoV1Fast },
);

/**
 * The consumers' session (libs/kafka/src/consumer/timings.ts says why 6 s): here so that the
 * page's picture can count a stopped member's session down with the value the shop runs.
 */
export const CONSUMER_SESSION_MS = 6_000;

/** Record key on both topics: the pedidoId as text. */
export function pedidoKey(pedidoId: number): string {
  return String(pedidoId);
}

// --- GET /plataforma (orders API, for the web panel) ----------------------------------

export const TopicPartitionSchema = z.object({
  partition: z.number().int(),
  endOffset: z.number().int(),
  /** The broker (node id) leading the partition; -1: none (no replica in sync is up). */
  leader: z.number().int(),
  /** The brokers holding a replica, and those of them in sync with the leader. */
  replicas: z.array(z.number().int()),
  isr: z.array(z.number().int()),
  /** Each reading group's committed offset (null: none yet) and lag on this partition. */
  grupos: z.array(
    z.object({
      grupo: z.string(),
      committedOffset: z.number().int().nullable(),
      lag: z.number().int(),
    }),
  ),
});
export type TopicPartition = z.output<typeof TopicPartitionSchema>;

const PartitionsSchema = z.record(z.string(), z.array(z.number().int()));

export const GroupMemberSchema = z.object({
  memberId: z.string(),
  clientId: z.string(),
  host: z.string(),
  particoes: PartitionsSchema,
});
export type GroupMember = z.output<typeof GroupMemberSchema>;

/** The orders API's outbox: events saved with their order and not yet acknowledged by Kafka. */
export const OutboxStateSchema = z.object({
  pendentes: z.number().int(),
  maisAntigoEm: z.string().nullable(),
  idadeMaisAntigoMs: z.number(),
  /** Events Kafka refused for good (too large, say): set aside with why; the rest went on. */
  postosDeLado: z.array(
    z.object({ pedidoId: z.number().int(), em: z.string(), motivo: z.string() }),
  ),
});
export type OutboxState = z.output<typeof OutboxStateSchema>;

export const PlataformaSchema = z.object({
  /** The brokers that answer now (node id and address) and the active controller's id. */
  cluster: z
    .object({
      brokers: z.array(z.object({ nodeId: z.number().int(), host: z.string(), port: z.number() })),
      controller: z.number().int().nullable(),
    })
    .optional(),
  topicos: z.array(z.object({ topic: z.string(), particoes: z.array(TopicPartitionSchema) })),
  grupos: z.array(
    z.object({ grupo: z.string(), estado: z.string(), membros: z.array(GroupMemberSchema) }),
  ),
  /** Null when the outbox is off. */
  outbox: OutboxStateSchema.nullable().optional(),
  /** The dead-letter topics: where each one's letters come from, and how many it holds. */
  mortas: z
    .array(z.object({ topic: z.string(), origem: z.string(), cartas: z.number().int() }))
    .optional(),
  /**
   * Set when Kafka did not answer: why. Topics and groups are then empty (the page keeps
   * its last reading of them); the outbox, the orders database's, is still this moment's.
   */
  indisponivel: z.string().optional(),
  lidoEm: z.string(),
});
export type Plataforma = z.output<typeof PlataformaSchema>;

/** One dead letter as the platform panel shows it, read-only (the dlq CLI redrives). */
export const DeadLetterSchema = z.object({
  /** Where it is: `<dlq topic>[partition]@offset`. */
  onde: z.string(),
  /** Where it failed: `<topic>[partition]@offset`. */
  origem: z.string(),
  motivo: z.string(),
  /** When it was dead-lettered (the dlq-em header). */
  em: z.string().nullable(),
  chave: z.string().nullable(),
  /** Its value as text, its first 500 characters. */
  corpo: z.string(),
});
export type DeadLetter = z.output<typeof DeadLetterSchema>;

/** The event-log edition's configurations (MODO): events on Kafka, or the earlier HTTP call. */
export const MODOS = ["eventos", "sincrono"] as const;
export type Modo = (typeof MODOS)[number];

/** A partition whose current record keeps failing: tried again with backoff, named here. */
export const StuckPartitionSchema = z.object({
  topic: z.string(),
  partition: z.number().int(),
  offset: z.string(),
  tentativas: z.number().int(),
  ultimoErro: z.string(),
  desde: z.string(),
});

export type StuckPartition = z.output<typeof StuckPartitionSchema>;

/** GET /saude of the orders API. */
export const SaudePedidosSchema = z.object({
  status: z.literal("ok"),
  modo: z.enum(MODOS),
  outbox: OutboxStateSchema.nullable(),
  /** The results consumer's stuck partitions (empty when none; null without Kafka). */
  particoesPresas: z.array(StuckPartitionSchema).nullable(),
});

/** GET /saude of a payments instance. */
export const SaudePagamentosSchema = z.object({
  status: z.literal("ok"),
  instancia: z.string(),
  modo: z.enum(MODOS),
  consumidor: z
    .object({
      conectado: z.boolean(),
      grupo: z.string(),
      particoes: PartitionsSchema,
      presas: z.array(StuckPartitionSchema),
    })
    .nullable(),
});

/** One decision a payments instance took, for GET /pagamentos. */
export const ProcessadoSchema = z.object({
  pedidoId: numericPedidoId,
  valor: positiveValor,
  status: z.enum(STATUS_PAGAMENTO),
  motivo: z.string().nullable(),
  instancia: z.string(),
  processadoEm: z.string(),
  origem: z.enum(["kafka", "http"]),
  particao: z.number().int().optional(),
  offset: z.string().optional(),
});
export type Processado = z.output<typeof ProcessadoSchema>;
