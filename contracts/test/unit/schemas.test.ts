import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { aPedidoCriado, aResultado } from "../../../test/helpers/fixtures.ts";
import {
  type MessageContract,
  NovoPedidoBrokerSchema,
  NovoPedidoSchema,
  PagamentoProcessado,
  PagamentoRequestSchema,
  PagamentoSincronoSchema,
  PedidoCriado,
  ResultadoPagamento,
  SolicitacaoPagamento,
  validationError,
} from "../../src/index.ts";

const UUID_A = "5f0b6a86-8f0e-4b5e-9a51-2f8f3c1f6a01";
const UUID_B = "0d6c1f7e-2a4b-4c6d-8e9f-a1b2c3d4e5f6";

function without<T extends object>(value: T, field: keyof T) {
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  delete copy[field as string];
  return copy;
}

/** A message contract refuses what it does not know, with a reason that says why. */
function expectRefused(
  contract: MessageContract<unknown>,
  value: unknown,
  kind: string,
  mention: string,
) {
  const result = contract.decode(JSON.stringify(value));
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.error.kind).toBe(kind);
    expect(result.error.reason).toContain(mention);
  }
}

function expectFieldError(schema: z.ZodType, value: unknown, field: string) {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  if (!result.success)
    expect(Object.keys(validationError(result.error.issues).campos ?? {})).toContain(field);
}

describe("Event-log contract: PedidoCriado", () => {
  const valid = aPedidoCriado({ pedidoId: 42 });

  it("When the event is valid, then it decodes to the same values", () => {
    expect(PedidoCriado.decode(JSON.stringify(valid))).toEqual({ ok: true, value: valid });
  });
  it("When the event arrives as bytes (a Buffer, or a view into a larger buffer), then it decodes the same", () => {
    const text = JSON.stringify(valid);
    expect(PedidoCriado.decode(Buffer.from(text))).toEqual({ ok: true, value: valid });
    // A Uint8Array that is a window on a larger buffer: only its own bytes are read.
    const bytes = new TextEncoder().encode(`xx${text}yy`);
    const window = new Uint8Array(bytes.buffer, 2, bytes.length - 4);
    expect(PedidoCriado.decode(window)).toEqual({ ok: true, value: valid });
  });
  it("When versao is unknown, then the reader refuses it instead of interpreting it", () => {
    expectRefused(PedidoCriado, { ...valid, versao: 2 }, "versao", "unknown versao 2");
    expectRefused(PedidoCriado, without(valid, "versao"), "versao", "unknown versao");
  });
  it("When a field is missing, then it is refused naming the field", () => {
    expectRefused(PedidoCriado, without(valid, "item"), "schema", "item");
  });
  it("When valor is zero, negative or has more than two decimals, then it is refused", () => {
    expectRefused(PedidoCriado, { ...valid, valor: 0 }, "schema", "valor");
    expectRefused(PedidoCriado, { ...valid, valor: -1 }, "schema", "valor");
    expectRefused(PedidoCriado, { ...valid, valor: 10.005 }, "schema", "valor");
  });
  it("When criadoEm is not an ISO 8601 UTC timestamp, then it is refused", () => {
    expectRefused(PedidoCriado, { ...valid, criadoEm: "21/11/2026" }, "schema", "criadoEm");
  });
  it("When the value is not JSON, then it is refused as malformed", () => {
    const result = PedidoCriado.decode("{not json");
    expect(result.ok === false && result.error.kind).toBe("json");
    expect(PedidoCriado.decode(null).ok).toBe(false);
    expect(PedidoCriado.decode("[1,2]").ok).toBe(false);
  });
  it("When our code encodes an event, then the JSON text carries versao 1 and decodes again", () => {
    const text = PedidoCriado.encode(valid as never);
    expect(JSON.parse(text).versao).toBe(1);
    expect(PedidoCriado.decode(text).ok).toBe(true);
  });
});

describe("Event-log contract: ResultadoPagamento", () => {
  const valid = aResultado({
    pedidoId: 42,
    status: "RECUSADO",
    motivo: "limite do cartão de teste",
    processadoEm: "2026-11-21T10:00:03.000Z",
  });
  it("When the event is valid, then it decodes, with motivo allowed to be null", () => {
    expect(ResultadoPagamento.decode(JSON.stringify(valid)).ok).toBe(true);
    expect(
      ResultadoPagamento.decode(JSON.stringify({ ...valid, status: "APROVADO", motivo: null })).ok,
    ).toBe(true);
  });
  it("When versao is unknown, then it is refused", () => {
    expectRefused(ResultadoPagamento, { ...valid, versao: 0 }, "versao", "unknown versao 0");
  });
  it("When status is unknown, then it is refused", () => {
    expectRefused(ResultadoPagamento, { ...valid, status: "PENDENTE" }, "schema", "status");
  });
  it("When instancia is missing, then it is refused", () => {
    expectRefused(ResultadoPagamento, without(valid, "instancia"), "schema", "instancia");
  });
});

describe("Broker contract: payment request (SolicitacaoPagamento)", () => {
  const valid = {
    versao: 1,
    solicitacaoId: UUID_A,
    pedidoId: UUID_B,
    valor: 37.8,
    cenario: "APROVAR",
  };
  it("When the command is valid, then it decodes", () => {
    expect(SolicitacaoPagamento.decode(Buffer.from(JSON.stringify(valid)))).toEqual({
      ok: true,
      value: valid,
    });
  });
  it("When versao is not 1, then it is refused", () => {
    expectRefused(SolicitacaoPagamento, { ...valid, versao: 2 }, "versao", "unknown versao 2");
    expectRefused(SolicitacaoPagamento, { ...valid, versao: "1" }, "versao", 'unknown versao "1"');
  });
  it("When an identifier is not a UUID, then it is refused", () => {
    expectRefused(
      SolicitacaoPagamento,
      { ...valid, solicitacaoId: "abc" },
      "schema",
      "solicitacaoId",
    );
    expectRefused(SolicitacaoPagamento, { ...valid, pedidoId: 7 }, "schema", "pedidoId");
  });
  it("When valor is ≤ 0 or has more than two decimals, then it is refused", () => {
    expectRefused(SolicitacaoPagamento, { ...valid, valor: 0 }, "schema", "valor");
    expectRefused(SolicitacaoPagamento, { ...valid, valor: 1.999 }, "schema", "valor");
  });
  it("When cenario is unknown, then it is refused", () => {
    expectRefused(SolicitacaoPagamento, { ...valid, cenario: "TALVEZ" }, "schema", "cenario");
  });
  it("When a field is missing, then it is refused", () => {
    expectRefused(SolicitacaoPagamento, without(valid, "cenario"), "schema", "cenario");
  });
});

describe("Broker contract: payment result (PagamentoProcessado)", () => {
  const valid = {
    versao: 1,
    solicitacaoId: UUID_A,
    pedidoId: UUID_B,
    valor: 37.8,
    aprovado: true,
    motivo: "aprovado pelo simulador",
  };
  it("When the event is valid, then it decodes", () => {
    expect(PagamentoProcessado.decode(JSON.stringify(valid)).ok).toBe(true);
  });
  it("When versao is not 1, then it is refused", () => {
    expectRefused(PagamentoProcessado, { ...valid, versao: 3 }, "versao", "unknown versao 3");
  });
  it("When aprovado is not a boolean, then it is refused", () => {
    expectRefused(PagamentoProcessado, { ...valid, aprovado: "sim" }, "schema", "aprovado");
  });
  it("When an identifier is not a UUID or valor is not positive, then it is refused", () => {
    expectRefused(PagamentoProcessado, { ...valid, solicitacaoId: "x" }, "schema", "solicitacaoId");
    expectRefused(PagamentoProcessado, { ...valid, valor: -5 }, "schema", "valor");
  });
  it("When motivo is missing, then it is refused", () => {
    expectRefused(PagamentoProcessado, without(valid, "motivo"), "schema", "motivo");
  });
});

describe("HTTP bodies", () => {
  it("Event-log POST /pedidos: a valid body passes and blanks are trimmed away", () => {
    const r = NovoPedidoSchema.safeParse({
      cliente: " Ana ",
      item: "caneca",
      quantidade: 2,
      precoUnitario: 18.9,
    });
    expect(r.success && r.data.cliente).toBe("Ana");
  });
  it("Event-log POST /pedidos: every input breach names its field", () => {
    const ok = { cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
    expectFieldError(NovoPedidoSchema, { ...ok, cliente: "   " }, "cliente");
    expectFieldError(NovoPedidoSchema, { ...ok, item: "" }, "item");
    expectFieldError(NovoPedidoSchema, { ...ok, quantidade: 0 }, "quantidade");
    expectFieldError(NovoPedidoSchema, { ...ok, quantidade: 51 }, "quantidade");
    expectFieldError(NovoPedidoSchema, { ...ok, quantidade: 1.5 }, "quantidade");
    expectFieldError(NovoPedidoSchema, { ...ok, precoUnitario: 0 }, "precoUnitario");
    expectFieldError(NovoPedidoSchema, { ...ok, precoUnitario: 9.999 }, "precoUnitario");
    expectFieldError(NovoPedidoSchema, without(ok, "item"), "item");
    expectFieldError(NovoPedidoSchema, { ...ok, valor: 1 }, "(body)");
  });
  it("Synchronous POST /pagamentos: pedidoId and a positive valor", () => {
    expect(PagamentoSincronoSchema.safeParse({ pedidoId: 1, valor: 100 }).success).toBe(true);
    expectFieldError(PagamentoSincronoSchema, { pedidoId: 1, valor: 0 }, "valor");
  });
  it("Broker POST /pedidos: items with quantity ≥ 1 and a positive price", () => {
    const ok = { clienteId: "c-1", itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }] };
    expect(NovoPedidoBrokerSchema.safeParse(ok).success).toBe(true);
    expectFieldError(NovoPedidoBrokerSchema, { ...ok, itens: [] }, "itens");
    expectFieldError(
      NovoPedidoBrokerSchema,
      { ...ok, itens: [{ sku: "X", quantidade: 0, precoUnitario: 1 }] },
      "itens.0.quantidade",
    );
    expectFieldError(
      NovoPedidoBrokerSchema,
      { ...ok, itens: [{ sku: "X", quantidade: 1, precoUnitario: 0 }] },
      "itens.0.precoUnitario",
    );
    expectFieldError(NovoPedidoBrokerSchema, without(ok, "clienteId"), "clienteId");
  });
  it("Broker POST /pedidos/{id}/pagamentos: a UUID key and a known cenario, no amount", () => {
    expect(
      PagamentoRequestSchema.safeParse({ solicitacaoId: UUID_A, cenario: "RECUSAR" }).success,
    ).toBe(true);
    expectFieldError(
      PagamentoRequestSchema,
      { solicitacaoId: "1", cenario: "RECUSAR" },
      "solicitacaoId",
    );
    expectFieldError(PagamentoRequestSchema, { solicitacaoId: UUID_A, cenario: "X" }, "cenario");
    expectFieldError(
      PagamentoRequestSchema,
      { solicitacaoId: UUID_A, cenario: "APROVAR", valor: 1 },
      "(body)",
    );
  });
});
