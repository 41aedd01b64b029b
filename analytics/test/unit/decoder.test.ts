import { PedidoCriado, ResultadoPagamento } from "@shop/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { aPedidoCriado, aResultado } from "../../../test/helpers/fixtures.ts";
import { BatchDecoder, type DecodedRecord } from "../../src/decoder.ts";

const at = "2026-11-24T10:00:00.000Z";
const criado = (pedidoId: number, item: string, valor: number) =>
  Buffer.from(
    PedidoCriado.encode(aPedidoCriado({ pedidoId, cliente: "c", item, valor, criadoEm: at })),
  );
const resultado = (pedidoId: number, status: "APROVADO" | "RECUSADO") =>
  Buffer.from(ResultadoPagamento.encode(aResultado({ pedidoId, status, processadoEm: at })));
const records = (b: { length: number; record(i: number): DecodedRecord }) =>
  Array.from({ length: b.length }, (_, i) => b.record(i));

describe("Decoding off the main thread (analytics)", () => {
  const decoder = new BatchDecoder();
  afterAll(() => decoder.close());

  it("When a batch mixes valid, invalid and empty values, then each record comes back as the contract decodes it, in order", async () => {
    const batch = await decoder.decode(true, [
      criado(1, "caneca", 10.5),
      Buffer.from("{not json"),
      null,
      Buffer.from(JSON.stringify({ versao: 2, pedidoId: 4 })),
      criado(5, "livro", 99.99),
    ]);
    const [first, notJson, empty, version, last] = records(batch);
    expect(first).toEqual({
      ok: true,
      criado: true,
      pedidoId: 1,
      item: "caneca",
      quantidade: 2,
      valor: 10.5,
    });
    expect(notJson).toMatchObject({ ok: false, reason: expect.stringContaining("not JSON") });
    expect(empty).toEqual({ ok: false, reason: "PedidoCriado: empty message" });
    expect(version).toMatchObject({
      ok: false,
      reason: expect.stringContaining("unknown versao 2"),
    });
    expect(last).toMatchObject({ ok: true, pedidoId: 5, item: "livro", valor: 99.99 });
  });

  it("When batches are handed over back to back, then they come back in that order, with the text of earlier batches still named right", async () => {
    const pending = Array.from({ length: 20 }, (_, n) =>
      n % 2 === 0
        ? decoder.decode(
            true,
            Array.from({ length: 50 }, (_, i) => criado(n * 50 + i + 1, `item-${i % 7}`, 1)),
          )
        : decoder.decode(
            false,
            Array.from({ length: 50 }, (_, i) =>
              resultado(n * 50 + i + 1, i % 3 ? "APROVADO" : "RECUSADO"),
            ),
          ),
    );
    const batches = await Promise.all(pending);
    batches.forEach((b, n) => {
      expect(b.criado).toBe(n % 2 === 0);
      records(b).forEach((r, i) => {
        expect(r).toMatchObject({ ok: true, pedidoId: n * 50 + i + 1 });
        if (r.ok && r.criado) expect(r.item).toBe(`item-${i % 7}`);
        if (r.ok && !r.criado) expect(r.status).toBe(i % 3 ? "APROVADO" : "RECUSADO");
      });
    });
  });

  it("When the decoder is closed, then a batch handed over afterwards is refused, not lost in silence", async () => {
    const other = new BatchDecoder();
    await other.close();
    await expect(other.decode(true, [criado(1, "x", 1)])).rejects.toThrow();
  });
});
