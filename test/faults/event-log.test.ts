import { join } from "node:path";
import { SESSION_MS } from "@shop/kafka";
import { STORAGE_FULL_MESSAGE } from "@shop/service";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownKafka } from "../../harness/own-kafka.ts";
import { committedOffsets, endOffsets, readTopic } from "../helpers/kafka.ts";
import { countRows, http, queryRows, type ServiceProcess } from "../helpers/shop.ts";
import { smallDisk } from "../helpers/small-disk.ts";
import { waitFor } from "../helpers/wait.ts";
import {
  decidedBy,
  type EventLogState,
  eventLogShop,
  streamOfOrders,
  uncommittedRecords,
} from "./harness.ts";
import { startedIn } from "./report.ts";

/**
 * Fault injection on the event-log edition: real processes, a real Kafka broker of this
 * file's own (so that it can be killed), a stream of orders while the fault happens. Each
 * scenario proves from state that its fault hit, and counts lost and doubled effects from
 * the orders database and both topics (harness.ts); the rows go to docs/RELIABILITY.md.
 */
const kafka = ownKafka("faults");
const running: ServiceProcess[] = [];

beforeAll(async () => {
  await kafka.start();
}, 120_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await kafka.dispose();
}, 120_000);

interface Decided {
  pedidoId: number;
  particao?: number;
  offset?: string;
}

/** The orders a payments instance says it decided (GET /pagamentos, its recent decisions). */
const decisionsOf = async (p: ServiceProcess) =>
  (await http<Decided[]>("GET", `${p.url()}/pagamentos`)).body.map((d) => d.pedidoId);

/** The partitions a payments instance's consumer holds now (GET /saude). */
const partitionsOf = async (p: ServiceProcess) =>
  Object.values(
    (await http<{ consumidor: { particoes: Record<string, number[]> } }>("GET", `${p.url()}/saude`))
      .body.consumidor.particoes,
  ).flat();

/** The partitions the given orders' PedidoCriado records are on. */
const partitionsOfOrders = (state: EventLogState, pedidoIds: Set<number>) =>
  new Set(
    state.criados.filter((r) => pedidoIds.has(Number(r.value.pedidoId))).map((r) => r.partition),
  );

/** The shop on this file's broker (or another), its processes stopped with the file's. */
const shop = (name: string, opts: { dbPath?: string; broker?: { brokers: string } } = {}) =>
  eventLogShop(running, name, { broker: kafka, ...opts });

describe("Fault injection: event-log edition", () => {
  // The same kill both ways: at-least-once (the spec) and exactly-once (Kafka transactions).
  it.each([
    ["pelo-menos-uma-vez", "decided again, both results published, applied once"],
    [
      "exatamente-uma-vez",
      "aborted with its transaction and decided once in effect: one result per order",
    ],
  ] as const)(
    "When a payments instance (ENTREGA=%s) is killed -9 mid-stream with two running, then what it decided and had not committed is %s",
    async (entrega, _outcome) => {
      const exactlyOnce = entrega === "exatamente-uma-vez";
      const s = shop(exactlyOnce ? "f-kill-payments-eos" : "f-kill-payments");
      const api = await s.start("orders-api", "orders-api");
      // kafkajs commits at the end of each fetched batch; the instance to be killed decides
      // slower (longer batches) and commits nowhere else (60 s instead of 5 s). Payments
      // starts once a backlog waits, so that its first batches are long, and caixa-1 is killed
      // as soon as it has written a decision its group has not committed with more records of
      // that partition still to decide: inside the window, not at a batch's end.
      const stream = streamOfOrders(() => api.url(), 60, 4, 50);
      await waitFor(() => stream.created.length >= 30, { what: "a backlog of orders" });
      const [one] = await Promise.all([
        s.payments("caixa-1", {
          ENTREGA: entrega,
          COMMIT_INTERVAL_MS: "60000",
          TEMPO_DECISAO_MS: "300",
        }),
        s.payments("caixa-2", { ENTREGA: entrega }),
      ]);
      if (!one) throw new Error("caixa-1 did not start");
      const committedNow = () =>
        committedOffsets(kafka.brokers, s.names.groups.pagamentos, s.names.topics.pedidosCriados);
      await waitFor(
        async () => {
          const committed = await committedNow();
          const ends = await endOffsets(kafka.brokers, s.names.topics.pedidosCriados);
          return (await http<Decided[]>("GET", `${one.url()}/pagamentos`)).body.some((d) => {
            const p = d.particao ?? -1;
            const offset = Number(d.offset);
            return offset >= (committed.get(p) ?? 0) && (ends.get(p) ?? 0) > offset + 2;
          });
        },
        {
          timeoutMs: 30_000,
          what: "caixa-1 to write a decision its group has not committed, mid-batch",
        },
      );
      await one.kill();
      const killedAt = Date.now();
      const committed = await committedNow();
      await stream.done;
      const state = await s.finish(
        api,
        stream,
        {
          scenario: `payments instance killed, ENTREGA=${entrega} (event-log)`,
          fault: "kill -9 one of two payments instances mid-stream",
          end: `the kill + the ${SESSION_MS / 1000} s session`,
        },
        async (state) => {
          // Every result written, aborted transactions' too: what caixa-1 had written.
          const written = await readTopic(kafka.brokers, s.names.topics.pagamentosResultados, {
            readUncommitted: true,
          });
          const byOne = new Set(
            written
              .filter((r) => r.value.instancia === "caixa-1")
              .map((r) => Number(r.value.pedidoId)),
          );
          const atKill = uncommittedRecords(state, committed, byOne);
          const again = atKill.filter((r) => {
            const id = Number(r.value.pedidoId);
            // Decided again by caixa-2, whose result is the one read as committed.
            return state.resultados.some(
              (x) => Number(x.value.pedidoId) === id && x.value.instancia === "caixa-2",
            );
          });
          const aborted = written.length - state.resultados.length;
          return {
            hit: atKill.length > 0 && again.length === atKill.length,
            text:
              `${atKill.length} records decided by caixa-1 and uncommitted at the kill; ` +
              `${again.length} of them decided again by caixa-2` +
              (exactlyOnce ? `; ${aborted} results written in aborted transactions` : ""),
          };
        },
        // Killed, caixa-1 says nothing: the group hears of it when its session ends.
        killedAt + SESSION_MS,
      );
      if (exactlyOnce)
        // One result per order in the topic as its consumers read it.
        expect([...state.decisionsPerPedido.values()].every((n) => n === 1)).toBe(true);
    },
    240_000,
  );

  it("When every service gets SIGTERM under load, then in-flight work finishes and is committed: after a restart nothing is lost, re-read or doubled", async () => {
    const s = shop("f-sigterm");
    let api = await s.start("orders-api", "orders-api");
    let payments = await s.payments("caixa-1");
    const stream = streamOfOrders(() => api.url(), 40, 4, 20);
    await waitFor(() => stream.created.length >= 15);
    const codes = await Promise.all([api.stop("SIGTERM"), payments.stop("SIGTERM")]);
    for (const code of codes) expect(code, "exit code on SIGTERM").toBe(0);
    const waiting = countRows(
      s.dbPath,
      "SELECT COUNT(*) AS n FROM pedidos WHERE status = 'AGUARDANDO_PAGAMENTO'",
    );
    // Both restarted at once, as a person restarting the shop would. The fault ends when
    // both answer again, as a broker's restart ends when it answers: their own start (two
    // Node processes, 0.5 s each on an idle machine, up to 3 s beside the suite's other
    // files) is printed beside the figure, not counted in it.
    const askedAt = Date.now();
    [api, payments] = await Promise.all([
      s.start("orders-api", "orders-api-2"),
      s.payments("caixa-1"),
    ]);
    const restartedAt = Date.now();
    await stream.done;
    const state = await s.finish(
      api,
      stream,
      {
        scenario: "SIGTERM under load (event-log)",
        fault: "SIGTERM to the orders API and payments, restart both",
        end: `both answering again, ${startedIn(askedAt, restartedAt)}`,
      },
      () => ({
        hit: waiting > 0,
        text: `${waiting} orders awaiting their decision at the signal`,
      }),
      restartedAt,
    );
    // A graceful stop commits what it decided: nothing is read again after the restart.
    expect([...state.decisionsPerPedido.values()].every((n) => n === 1)).toBe(true);
  }, 240_000);

  it("When the outbox relay is killed -9 between Kafka's acknowledgement and its mark, then the event is published again and one decision is applied", async () => {
    const s = shop("f-kill-relay");
    // The relay waits 3 s between the acknowledgement and the mark: the window to kill in.
    let api = await s.start("orders-api", "orders-api", { PAUSA_ANTES_DE_MARCAR_MS: "3000" });
    const payments = await s.payments("caixa-1");
    const stream = streamOfOrders(() => api.url(), 12, 2, 100);
    // An order decided by payments while its outbox row is not marked sent: published, unmarked.
    await waitFor(
      async () =>
        (await decisionsOf(payments)).some(
          (id) =>
            countRows(
              s.dbPath,
              "SELECT COUNT(*) AS n FROM outbox WHERE pedido_id = ? AND enviado_em IS NULL",
              id,
            ) > 0,
        ),
      { what: "an order decided while its outbox row is unmarked" },
    );
    await api.kill();
    const unmarked = new Set(
      queryRows<{ pedido_id: number }>(
        s.dbPath,
        "SELECT pedido_id FROM outbox WHERE enviado_em IS NULL",
      ).map((r) => r.pedido_id),
    );
    await stream.done;
    const askedAt = Date.now();
    api = await s.start("orders-api", "orders-api-2");
    const restartedAt = Date.now();
    await s.finish(
      api,
      stream,
      {
        scenario: "outbox relay killed between publish and mark (event-log)",
        fault: "kill -9 the orders API inside the relay's publish-to-mark window",
        end: `the orders API answering again, ${startedIn(askedAt, restartedAt)}`,
      },
      (state) => {
        const twice = [...unmarked].filter((id) => (state.criadosPerPedido.get(id) ?? 0) >= 2);
        return {
          hit: twice.length > 0,
          text: `${unmarked.size} outbox rows unmarked at the kill; ${twice.length} of them published twice`,
        };
      },
      restartedAt,
    );
  }, 240_000);

  it("When a payments instance joins and another leaves under load, then partitions move, re-reads are counted by instance, and each order is applied once", async () => {
    const s = shop("f-join-leave");
    const api = await s.start("orders-api", "orders-api");
    // Slower decisions keep a backlog in the topic, so that moved partitions have work.
    const one = await s.payments("caixa-1", { TEMPO_DECISAO_MS: "300" });
    const stream = streamOfOrders(() => api.url(), 60, 2, 150);
    await waitFor(async () => (await decisionsOf(one)).length >= 3, {
      what: "caixa-1 deciding",
    });
    const two = await s.payments("caixa-2", { TEMPO_DECISAO_MS: "300" });
    await waitFor(async () => (await decisionsOf(two)).length >= 3, {
      timeoutMs: 30_000,
      what: "caixa-2 deciding after it joined",
    });
    await one.stop("SIGTERM");
    const leftAt = Date.now();
    await stream.done;
    await s.finish(
      api,
      stream,
      {
        scenario: "payments join and leave under load (event-log)",
        fault: "a second payments instance joins, the first leaves (SIGTERM)",
        end: "caixa-1's SIGTERM: it leaves the group on its way out",
      },
      (state) => {
        const [first, second] = [decidedBy(state, "caixa-1"), decidedBy(state, "caixa-2")];
        const moved = [...partitionsOfOrders(state, first)].filter((p) =>
          partitionsOfOrders(state, second).has(p),
        );
        const both = [...first].filter((id) => second.has(id));
        return {
          hit: moved.length > 0,
          text: `partitions ${moved.join(", ")} decided by caixa-1, then by caixa-2; ${first.size} orders decided by caixa-1, ${second.size} by caixa-2, ${both.length} by both`,
        };
      },
      leftAt,
    );
  }, 240_000);

  it("When a payments instance is paused (SIGSTOP) longer than its session, then its partitions move, and after SIGCONT every order is still applied once", async () => {
    const s = shop("f-sigstop");
    const api = await s.start("orders-api", "orders-api");
    const [one, two] = await Promise.all([
      s.payments("caixa-1", { TEMPO_DECISAO_MS: "300" }),
      s.payments("caixa-2", { TEMPO_DECISAO_MS: "300" }),
    ]);
    if (!one || !two) throw new Error("payments did not start");
    const stream = streamOfOrders(() => api.url(), 60, 2, 300);
    await waitFor(async () => (await decisionsOf(one)).length >= 3, {
      what: "caixa-1 deciding",
    });
    const before = new Set(await partitionsOf(one));
    one.child.kill("SIGSTOP");
    const stoppedAt = Date.now();
    // The session ends; the group moves caixa-1's partitions to caixa-2.
    await waitFor(async () => (await partitionsOf(two)).length === 3, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: "caixa-2 to hold every partition",
    });
    one.child.kill("SIGCONT");
    await stream.done;
    await s.finish(
      api,
      stream,
      {
        scenario: "payments paused past its session (event-log)",
        fault: `SIGSTOP one of two payments instances for longer than the ${SESSION_MS / 1000} s session, then SIGCONT`,
        end: `SIGSTOP + the ${SESSION_MS / 1000} s session`,
      },
      (state) => {
        const second = decidedBy(state, "caixa-2");
        const moved = [...partitionsOfOrders(state, second)].filter((p) => before.has(p));
        const both = [...decidedBy(state, "caixa-1")].filter((id) => second.has(id));
        return {
          hit: before.size > 0 && moved.length > 0,
          text: `caixa-1's partitions ${[...before].join(", ")} moved to caixa-2 while it was stopped; ${both.length} orders decided by both`,
        };
      },
      // Stopped, caixa-1 says nothing: the group hears of it when its session ends.
      stoppedAt + SESSION_MS,
    );
  }, 240_000);

  it("When the orders API's disk fills up under load, then requests answer 503 with a clear error, nothing is half-saved, and once space is back nothing is lost", async () => {
    // The orders database on a small filesystem of the test's own, filled to the last byte.
    const disk = smallDisk(16);
    try {
      const s = shop("f-disk-full", { dbPath: join(disk.dir, "pedidos.db") });
      const api = await s.start("orders-api", "orders-api");
      await s.payments("caixa-1");
      const stream = streamOfOrders(() => api.url(), 150, 2, 100);
      await waitFor(() => stream.created.length >= 5);
      disk.fill();
      await waitFor(() => stream.refused.length >= 3, {
        timeoutMs: 60_000,
        what: "orders refused while the disk is full",
      });
      // Nothing half-saved: each order with its one outbox row, no row without its order.
      const halfSaved = () =>
        countRows(
          s.dbPath,
          `SELECT (SELECT COUNT(*) FROM pedidos p WHERE (SELECT COUNT(*) FROM outbox o WHERE o.pedido_id = p.id) <> 1)
                + (SELECT COUNT(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM pedidos p WHERE p.id = o.pedido_id)) AS n`,
        );
      expect(halfSaved()).toBe(0);
      disk.free();
      const freedAt = Date.now();
      await stream.done;
      const refused = [...stream.refused];
      await s.finish(
        api,
        stream,
        {
          scenario: "orders database disk full (event-log)",
          fault: "the orders API's filesystem filled to the last byte mid-stream, then freed",
          end: "space freed",
        },
        () => ({
          hit: refused.length > 0 && refused.every((e) => e === STORAGE_FULL_MESSAGE),
          text: `${refused.length} orders answered 503 "${refused[0]}"`,
        }),
        freedAt,
      );
      expect(halfSaved()).toBe(0);
      // Orders kept coming once the space was back.
      expect(stream.created.length + stream.refused.length + stream.unconfirmed.length).toBe(150);
    } finally {
      await Promise.all(running.splice(0).map((p) => p.stop()));
      disk.dispose();
    }
  }, 240_000);
});
