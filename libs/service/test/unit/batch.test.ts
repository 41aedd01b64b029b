import { describe, expect, it } from "vitest";
import { batchPerTurn } from "../../src/batch.ts";

describe("Batching per turn and group commit (batchPerTurn)", () => {
  it("When requests arrive in the same turn, then their writes run in one batch and each gets its own result", async () => {
    const lotes: number[][] = [];
    const gravar = batchPerTurn((itens: number[]) => {
      lotes.push(itens);
      return itens.map((n) => n * 10);
    });
    const resultados = await Promise.all([gravar(1), gravar(2), gravar(3)]);
    expect(resultados).toEqual([10, 20, 30]);
    expect(lotes).toEqual([[1, 2, 3]]);
    expect(await gravar(4)).toBe(40); // a later turn: a batch of its own
    expect(lotes).toEqual([[1, 2, 3], [4]]);
  });

  it("When one item makes the batch fail, then the others are written alone and only that request fails", async () => {
    const gravadas: number[][] = [];
    const gravar = batchPerTurn((itens: number[]) => {
      if (itens.includes(13)) throw new Error("13 breaks the transaction");
      gravadas.push(itens);
      return itens;
    });
    const r = await Promise.allSettled([gravar(1), gravar(13), gravar(2)]);
    expect(r.map((x) => x.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((r[1] as PromiseRejectedResult).reason.message).toBe("13 breaks the transaction");
    expect(gravadas).toEqual([[1], [2]]);
  });

  it("When asked not to split a failed batch (Kafka publishes), then every caller of that batch gets the error and the work runs once", async () => {
    let chamadas = 0;
    const publicar = batchPerTurn(
      async (itens: string[]) => {
        chamadas++;
        throw new Error(`no acknowledgement for ${itens.length}`);
      },
      { splitOnFailure: false },
    );
    const r = await Promise.allSettled([publicar("a"), publicar("b")]);
    expect(r.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    expect((r[0] as PromiseRejectedResult).reason.message).toBe("no acknowledgement for 2");
    expect(chamadas).toBe(1);
  });
});
