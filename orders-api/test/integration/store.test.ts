import { MAX_CENTS } from "@shop/contracts";
import type { Publisher } from "@shop/kafka";
import { createLogger } from "@shop/service";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshOrdersStore, queryOrdersDb, TEST_STORE } from "../../../harness/orders-store.ts";
import { aStoredPedido } from "../../../test/helpers/fixtures.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import type { Pedido } from "../../src/domain/pedido.ts";
import { startOutboxRelay } from "../../src/messaging/outbox-relay.ts";
import { openStore } from "../../src/store/open.ts";
import {
  KeyTaken,
  MIGRATIONS,
  type OutboxClaim,
  type OutboxRow,
  type PedidoStore,
  StoreUnavailable,
} from "../../src/store.ts";

/**
 * Issue 37: one interface, two stores, one suite. This file runs in the `integration`
 * project against SQLite and in the `postgres` project against PostgreSQL (a database of
 * its own on the machine's server): the same assertions hold for both.
 */
const novo = aStoredPedido;

/**
 * Waits until `s`'s relay owns the outbox (PostgreSQL: one relay at a time publishes), by
 * handing it a row of its own until a round of it takes one: the first try waits for its
 * LISTEN connection.
 */
async function owning(s: PedidoStore): Promise<void> {
  await s.savePedido(novo(), {
    outboxOf: (p) => ({ topic: "t", key: String(p.id), value: "{}", traceparent: "" }),
  });
  await waitFor(
    async () => {
      let owned = false;
      await s.claimOutbox(100, async (rows, claim) => {
        owned = true;
        await markAll(claim, rows, 0, "0");
      });
      return owned;
    },
    { what: "the store's relay to own the outbox" },
  );
}

/** Marks every claimed row sent, at one partition and offset. */
const markAll = (claim: OutboxClaim, rows: OutboxRow[], particao: number, offset: string) =>
  claim.markSent(
    rows.map((r) => ({ id: r.id, pedidoId: r.pedido_id, topico: r.topico, particao, offset })),
  );

let fresh: Awaited<ReturnType<typeof freshOrdersStore>>;
let store: PedidoStore;
const settings = () => ({
  dbPath: "DB_PATH" in fresh.env ? fresh.env.DB_PATH : "",
  databaseUrl: "DATABASE_URL" in fresh.env ? fresh.env.DATABASE_URL : null,
});

beforeAll(async () => {
  fresh = await freshOrdersStore("store");
  store = await openStore(settings());
});
afterAll(async () => {
  await store?.close();
  await fresh?.drop();
});

describe(`The orders store (${TEST_STORE})`, () => {
  it("When an order is saved, then it reads back field for field with a new id, and lists newest first", async () => {
    const a = await store.savePedido(novo({ item: "a" }));
    const b = await store.savePedido(novo({ item: "b", valorCentavos: MAX_CENTS }));
    expect(b.id).toBeGreaterThan(a.id);
    expect(await store.findPedido(a.id)).toEqual(a);
    expect(await store.findPedido(b.id)).toEqual(b);
    expect(await store.findPedido(999_999)).toBeNull();
    const list = await store.listPedidos(2);
    expect(list.map((p) => p.id)).toEqual([b.id, a.id]);
  });

  it("When an amount outside the money range is saved, then the database refuses it and nothing is written", async () => {
    const before = (await store.listPedidos(1))[0]?.id ?? 0;
    await expect(store.savePedido(novo({ valorCentavos: MAX_CENTS + 1 }))).rejects.toThrow();
    expect((await store.listPedidos(1))[0]?.id ?? 0).toBe(before);
  });

  it("When an Idempotency-Key is saved twice, then the second save throws KeyTaken and writes neither order nor outbox row", async () => {
    const key = { key: `k-${Date.now()}`, fingerprint: "f" };
    const entry = (p: Pedido) => ({ topic: "t", key: String(p.id), value: "{}", traceparent: "" });
    const first = await store.savePedido(novo(), { key, outboxOf: entry });
    const pendingBefore = (await store.outboxState()).pendentes;
    await expect(store.savePedido(novo(), { key, outboxOf: entry })).rejects.toBeInstanceOf(
      KeyTaken,
    );
    expect((await store.listPedidos(1))[0]?.id).toBe(first.id);
    expect((await store.outboxState()).pendentes).toBe(pendingBefore);
    expect(await store.findKey(key.key)).toMatchObject({ pedidoId: first.id, status: null });
    await store.saveAnswer(key.key, 201, JSON.stringify({ id: first.id }));
    expect(await store.findKey(key.key)).toMatchObject({ status: 201, answer: { id: first.id } });
  });

  it("When a decision is applied, then its status and steps are written together, once, under the order's row", async () => {
    const p = await store.savePedido(novo());
    const decide = (pedido: Pedido) => ({
      status:
        pedido.status === "AGUARDANDO_PAGAMENTO"
          ? { status: "PAGO" as const, motivo: null, processadoPor: "caixa-1" }
          : null,
      steps: [
        {
          etapa: pedido.status === "AGUARDANDO_PAGAMENTO" ? "aplicado" : "repetido",
          details: { n: 1 },
        },
      ],
      answer: pedido.status,
    });
    expect(await store.updatePedido(p.id, decide)).toBe("AGUARDANDO_PAGAMENTO");
    expect(await store.updatePedido(p.id, decide)).toBe("PAGO");
    expect(await store.updatePedido(999_999, decide)).toBeNull();
    expect(await store.findPedido(p.id)).toMatchObject({
      status: "PAGO",
      processadoPor: "caixa-1",
    });
    expect((await store.steps(p.id)).map((s) => s.etapa)).toEqual(["aplicado", "repetido"]);
  });

  it("When an order's results are handed over without waiting (the consumer's pipeline), then they apply in the order given: the first decides, the rest repeat", async () => {
    // A store opened now: on PostgreSQL its pool opens a connection per transaction at
    // first, and those connections come up in any order.
    const opened = await openStore(settings());
    try {
      const pedidos = await Promise.all(Array.from({ length: 8 }, () => opened.savePedido(novo())));
      const decide = (instancia: string) => (pedido: Pedido) => ({
        status:
          pedido.status === "AGUARDANDO_PAGAMENTO"
            ? { status: "PAGO" as const, motivo: null, processadoPor: instancia }
            : null,
        steps: [{ etapa: "decidido", details: { instancia } }],
        answer: pedido.status,
      });
      await Promise.all(
        pedidos.flatMap((p) =>
          ["caixa-1", "caixa-2", "caixa-3"].map((c) => opened.updatePedido(p.id, decide(c))),
        ),
      );
      for (const p of pedidos) {
        expect((await opened.findPedido(p.id))?.processadoPor).toBe("caixa-1");
        expect((await opened.steps(p.id)).map((s) => s.detalhes.instancia)).toEqual([
          "caixa-1",
          "caixa-2",
          "caixa-3",
        ]);
      }
    } finally {
      await opened.close();
    }
  });

  it("When the relay claims the outbox, then it gets the oldest rows first; rows it marks leave it, a failed round leaves them pending", async () => {
    const entry = (p: Pedido) => ({
      topic: "t",
      key: String(p.id),
      value: `{"id":${p.id}}`,
      traceparent: "",
    });
    // Earlier tests' rows first: mark them, so that this test sees its own.
    await store.claimOutbox(1000, (rows, claim) => markAll(claim, rows, 0, "0"));
    const saved = [];
    for (let i = 0; i < 3; i++) saved.push(await store.savePedido(novo(), { outboxOf: entry }));
    let seen: OutboxRow[] = [];
    await expect(
      store.claimOutbox(10, async (rows) => {
        seen = rows;
        throw new Error("Kafka did not acknowledge");
      }),
    ).rejects.toThrow("Kafka did not acknowledge");
    expect(seen.map((r) => r.pedido_id)).toEqual(saved.map((p) => p.id));
    expect((await store.outboxState()).pendentes).toBe(3);

    await store.claimOutbox(2, async (rows, claim) => {
      await markAll(claim, rows, 1, "7");
    });
    const [third] = saved.slice(2) as [Pedido];
    await store.claimOutbox(10, async (rows, claim) => {
      expect(rows.map((r) => r.pedido_id)).toEqual([third.id]);
      await claim.setAside({ id: (rows[0] as OutboxRow).id, pedidoId: third.id }, "too large");
    });
    expect(await store.outboxState()).toEqual({ pendentes: 0, maisAntigoEm: null });
    expect((await store.setAsideRows()).map((r) => [r.pedidoId, r.motivo])).toContainEqual([
      third.id,
      "too large",
    ]);
    expect((await store.steps((saved[0] as Pedido).id))[0]).toMatchObject({
      etapa: "evento-confirmado",
      detalhes: { topico: "t", particao: 1, offset: "7" },
    });
  });

  it("When the store is opened again, then no migration runs twice and the data is there", async () => {
    const again = await openStore(settings());
    try {
      const [last] = await store.listPedidos(1);
      expect(last).toBeDefined();
      expect(await again.findPedido((last as Pedido).id)).toEqual(last);
    } finally {
      await again.close();
    }
    expect(MIGRATIONS.length).toBeGreaterThanOrEqual(8);
  });

  if (TEST_STORE === "postgres") {
    it("Issue 49: when orders are saved together (group commit on PostgreSQL), then they share one transaction, and a key taken fails only its own save", async () => {
      const entry = (p: Pedido) => ({
        topic: "t",
        key: String(p.id),
        value: "{}",
        traceparent: "",
      });
      const taken = { key: `k-${Date.now()}`, fingerprint: "f" };
      const first = await store.savePedido(novo(), { key: taken, outboxOf: entry });
      // One turn: four orders, the third with a key already saved.
      const saves = [0, 1, 2, 3].map((i) =>
        store.savePedido(novo({ item: `turn-${i}` }), {
          outboxOf: entry,
          ...(i === 2 ? { key: taken } : {}),
        }),
      );
      const outcomes = await Promise.allSettled(saves);
      expect(outcomes.map((o) => o.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(KeyTaken);
      expect((await store.findKey(taken.key))?.pedidoId).toBe(first.id);
      const saved = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      for (const p of saved) expect(await store.findPedido(p.id)).toEqual(p);
      // The batch failed whole on the key, then each order was saved alone: three
      // transactions. A turn without a taken key shares one (the rows' xmin, below).
      const again = await Promise.all(
        [0, 1, 2, 3, 4].map((i) =>
          store.savePedido(novo({ item: `one-commit-${i}` }), { outboxOf: entry }),
        ),
      );
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: settings().databaseUrl as string });
      await client.connect();
      try {
        const ids = again.map((p) => p.id);
        const xmins = await client.query(
          "SELECT DISTINCT xmin::text FROM pedidos WHERE id = ANY($1::int[]) UNION SELECT DISTINCT xmin::text FROM outbox WHERE pedido_id = ANY($1::int[])",
          [ids],
        );
        expect(xmins.rows).toHaveLength(1);
        const outbox = await client.query(
          "SELECT pedido_id FROM outbox WHERE pedido_id = ANY($1::int[]) ORDER BY id",
          [ids],
        );
        expect(outbox.rows.map((r) => r.pedido_id)).toEqual(ids);
      } finally {
        await client.end();
      }
      // The rows leave the outbox, as the next tests expect it.
      await store.claimOutbox(100, (rows, claim) => markAll(claim, rows, 0, "0"));
      expect((await store.outboxState()).pendentes).toBe(0);
    });

    it("Issue 57: when two instances run, then one relay owns the outbox and publishes every instance's rows with no transaction open; when its instance dies, the other's relay takes the rest", async () => {
      const entry = (p: Pedido) => ({
        topic: "t",
        key: String(p.id),
        value: "{}",
        traceparent: "",
      });
      await owning(store);
      const other = await openStore(settings());
      let otherOpen = true;
      try {
        const saved: number[] = [];
        for (let i = 0; i < 3; i++) {
          saved.push((await store.savePedido(novo(), { outboxOf: entry })).id);
          saved.push((await other.savePedido(novo(), { outboxOf: entry })).id);
        }
        let otherClaimed = false;
        await other.claimOutbox(10, async () => {
          otherClaimed = true;
        });
        expect(otherClaimed).toBe(false);
        // The owner holds its rows (publishing, say): no transaction is open meanwhile.
        let release: () => void = () => {};
        const held = new Promise<void>((r) => {
          release = r;
        });
        let taken: number[] = [];
        const round = store.claimOutbox(10, async (rows, claim) => {
          taken = rows.map((r) => r.pedido_id);
          await held;
          await markAll(claim, rows, 0, "0");
        });
        await waitFor(() => taken.length > 0, { what: "the owner's round" });
        const open = await queryOrdersDb<{ n: number }>(
          settings().databaseUrl as string,
          "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
        );
        expect(open[0]?.n).toBe(0);
        release();
        await round;
        expect(taken).toEqual(saved);

        // The owner's instance dies with a row pending: the lock goes with its connection,
        // and the other instance's relay owns the outbox at its next try.
        const left = (await store.savePedido(novo(), { outboxOf: entry })).id;
        await store.close();
        store = await openStore(settings());
        let after: number[] = [];
        await waitFor(
          async () => {
            await other.claimOutbox(10, async (rows, claim) => {
              after = rows.map((r) => r.pedido_id);
              await markAll(claim, rows, 0, "0");
            });
            return after.includes(left);
          },
          { what: "the other relay to own the outbox and publish the row left" },
        );
        expect((await store.outboxState()).pendentes).toBe(0);
        await other.close();
        otherOpen = false;
      } finally {
        if (otherOpen) await other.close();
      }
    });

    it("When the relay that owns the outbox announces a row before this instance's request waits for it, then the wait ends at once", async () => {
      // Under load an instance's event loop can run late: between an order's commit and its
      // request's waitUntilSent, the relay that owns the outbox (another instance's)
      // published, marked and announced the row. The scale-out bench met it.
      await owning(store);
      const mine = await openStore(settings());
      const relay = startOutboxRelay({
        store: mine,
        publisher: {
          publishBatch: () =>
            Promise.reject(new Error("this instance's relay does not own the outbox")),
        } as unknown as Publisher,
        log: createLogger("orders-api"),
        pollMs: 60_000,
      });
      try {
        // A new store LISTENs once its connection is up: until then a mark is not heard.
        let heard = false;
        mine.onOutboxMarked(() => {
          heard = true;
        });
        await waitFor(
          async () => {
            await mine.savePedido(novo(), {
              outboxOf: (p) => ({ topic: "t", key: String(p.id), value: "{}", traceparent: "" }),
            });
            await store.claimOutbox(100, (rows, claim) => markAll(claim, rows, 0, "0"));
            return heard;
          },
          { what: "the new store to hear the owner's marks" },
        );
        const pedido = await mine.savePedido(novo(), {
          outboxOf: (p) => ({ topic: "t", key: String(p.id), value: "{}", traceparent: "" }),
        });
        const announced = new Promise<void>((resolve) =>
          mine.onOutboxMarked(({ sent }) => {
            if (sent.includes(pedido.id)) resolve();
          }),
        );
        await store.claimOutbox(10, (rows, claim) => markAll(claim, rows, 0, "7"));
        await announced;
        const started = Date.now();
        await relay.waitUntilSent(pedido.id, 3000);
        expect(Date.now() - started).toBeLessThan(1000);
      } finally {
        await relay.stop();
        await mine.close();
      }
    });

    it("When PostgreSQL does not answer, then a save fails as StoreUnavailable (503) within 5 s", async () => {
      const url = new URL(settings().databaseUrl as string);
      url.port = "1"; // nothing listens there
      const started = Date.now();
      await expect(openStore({ dbPath: "", databaseUrl: url.toString() })).rejects.toBeInstanceOf(
        StoreUnavailable,
      );
      expect(Date.now() - started).toBeLessThan(5000);
    });
  }
});
