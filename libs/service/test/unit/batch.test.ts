import { context, createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { describe, expect, it } from "vitest";
import { batchPerTurn, groupCommit } from "../../src/batch.ts";

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

  it("When batching adapts to load (whileInFlight), then the first item goes at once, those handed over while it is in flight go together next, in order, one run at a time", async () => {
    const runs: number[][] = [];
    let inFlight = 0;
    let most = 0;
    const ends: (() => void)[] = [];
    const publish = batchPerTurn(
      async (items: number[]) => {
        runs.push(items);
        most = Math.max(most, ++inFlight);
        await new Promise<void>((resolve) => ends.push(resolve));
        inFlight--;
        return items.map((n) => n * 10);
      },
      { splitOnFailure: false, whileInFlight: true },
    );
    const first = publish(1);
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[1]]); // idle: sent at once, alone
    // Three more turns while the first run is in flight: none is sent yet.
    const later: Promise<number>[] = [];
    for (const n of [2, 3, 4]) {
      later.push(publish(n));
      await new Promise((r) => setImmediate(r));
    }
    expect(runs).toEqual([[1]]);
    (ends.shift() as () => void)();
    expect(await first).toBe(10);
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[1], [2, 3, 4]]); // gathered while in flight: one run
    (ends.shift() as () => void)();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(most).toBe(1);
    // Idle again: the next item goes at once.
    const again = publish(5);
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[1], [2, 3, 4], [5]]);
    (ends.shift() as () => void)();
    expect(await again).toBe(50);
  });

  it("When units of one turn share a transaction, then each runs in its own caller's context (its request's trace) and once the shared transaction failed, alone", async () => {
    // The services' context: OpenTelemetry's, kept in AsyncLocalStorage (trace.ts).
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const key = createContextKey("caller");
    const as = <T>(id: string, fn: () => T) => context.with(ROOT_CONTEXT.setValue(key, id), fn);
    const caller = () => context.active().getValue(key) as string;
    const transactions: number[] = [];
    const inTransaction = groupCommit(<T>(work: () => T): T => {
      transactions.push(1);
      return work();
    });
    const seen = await Promise.all(
      ["a", "b", "c"].map((id) => as(id, () => inTransaction(caller))),
    );
    expect(seen).toEqual(["a", "b", "c"]);
    expect(transactions).toHaveLength(1);
    const failing = await Promise.allSettled(
      ["d", "e"].map((id) =>
        as(id, () =>
          inTransaction(() => {
            if (caller() === "d") throw new Error("d breaks it");
            return caller();
          }),
        ),
      ),
    );
    expect(failing.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect((failing[1] as PromiseFulfilledResult<string>).value).toBe("e");
  });
});
