import { describe, expect, it } from "vitest";
import type { OutboxRow } from "../../src/store.ts";
import { OutboxQueue } from "../../src/store/sqlite.ts";

const row = (id: number): OutboxRow => ({
  id,
  pedido_id: id,
  topico: "pedidos-criados",
  chave: String(id),
  valor: "{}",
  criado_em: "2026-12-07T10:00:00.000Z",
  traceparent: null,
});

/** A queue with rows committed by `ids` transactions of one row each. */
function commit(queue: OutboxQueue, ...ids: number[]) {
  for (const id of ids)
    queue.committing(() => {
      queue.staged.push(row(id));
    });
}

describe("The relay is handed the outbox rows this process committed (issue 57)", () => {
  it("When the queue starts, then the rows come from the table until a read finds every pending row", () => {
    const queue = new OutboxQueue();
    let reads = 0;
    const table = (rows: OutboxRow[]) => (limit: number) => {
      reads++;
      return rows.slice(0, limit);
    };
    commit(queue, 7);
    // A full round: the table may hold more than the limit, so memory is not trusted yet.
    expect(queue.take(2, table([row(5), row(6), row(7)])).map((r) => r.id)).toEqual([5, 6]);
    expect(queue.take(2, table([row(7)])).map((r) => r.id)).toEqual([7]);
    expect(reads).toBe(2);
    commit(queue, 8, 9);
    expect(queue.take(10, table([])).map((r) => r.id)).toEqual([8, 9]);
    expect(queue.take(10, table([])).map((r) => r.id)).toEqual([]);
    expect(reads).toBe(2);
  });

  it("When a transaction fails, then its rows never reach the relay", () => {
    const queue = new OutboxQueue();
    queue.take(10, () => []);
    expect(() =>
      queue.committing(() => {
        queue.staged.push(row(1));
        throw new Error("SQLITE_FULL");
      }),
    ).toThrow("SQLITE_FULL");
    commit(queue, 2);
    expect(queue.take(10, () => []).map((r) => r.id)).toEqual([2]);
  });

  it("When a round leaves rows unmarked (Kafka away), then the next round reads the table, which still has them", () => {
    const queue = new OutboxQueue();
    queue.take(10, () => []);
    commit(queue, 1, 2);
    expect(queue.take(10, () => []).map((r) => r.id)).toEqual([1, 2]);
    queue.doubt();
    commit(queue, 3);
    const pending = [row(1), row(2), row(3)];
    expect(queue.take(10, () => pending).map((r) => r.id)).toEqual([1, 2, 3]);
    commit(queue, 4);
    expect(queue.take(10, () => []).map((r) => r.id)).toEqual([4]);
  });

  it("When no relay takes from the queue, then it holds at most OutboxQueue.MOST rows and the table is read again", () => {
    const queue = new OutboxQueue();
    queue.take(10, () => []);
    for (let id = 1; id <= OutboxQueue.MOST + 1; id++) commit(queue, id);
    expect(queue.take(10, () => [row(1)]).map((r) => r.id)).toEqual([1]);
  });
});
