import { spawnSync } from "node:child_process";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { analyticsCli, http } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";

export interface Pedido {
  id: number;
  status: string;
  valor: number;
  processadoPor: string | null;
}

/** What a client saw for each order it tried to place. */
export interface Stream {
  created: number[];
  /** 500: saved, event not confirmed in time. */
  unconfirmed: number[];
  /** No answer (the API was down or killed): may or may not be saved. */
  unanswered: number;
  done: Promise<void>;
}

/**
 * Places `total` orders, `concurrency` at a time, while a fault happens. Half are under
 * 100.00 and half over, so both decisions occur.
 */
export function streamOfOrders(
  baseUrl: () => string,
  total: number,
  concurrency = 4,
  pauseMs = 50,
): Stream {
  const s: Stream = { created: [], unconfirmed: [], unanswered: 0, done: Promise.resolve() };
  let next = 0;
  async function worker() {
    while (next < total) {
      const n = next++;
      const body = {
        cliente: `c${n}`,
        item: `item-${n % 5}`,
        quantidade: 1 + (n % 3),
        precoUnitario: n % 2 === 0 ? 20 : 60,
      };
      try {
        const res = await http<{ id: number; erro?: string }>("POST", `${baseUrl()}/pedidos`, body);
        if (res.status === 201) s.created.push(res.body.id);
        else if (res.status === 500)
          s.unconfirmed.push(Number(res.body.erro?.match(/order (\d+)/)?.[1]));
        else throw new Error(`unexpected ${res.status}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith("unexpected")) throw error;
        s.unanswered++;
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
  s.done = Promise.all(Array.from({ length: concurrency }, worker)).then(() => {});
  return s;
}

/**
 * The four end-of-scenario checks: every order reaches a final state; each was decided
 * once in effect (one result applied, one processadoPor); nothing is lost; analytics,
 * replayed from offset 0 in a new group, agrees with the orders database.
 */
export async function expectConsistent(opts: {
  apiUrl: string;
  stream: Stream;
  /** The orders API's database: what was applied is counted there, not in log lines. */
  ordersDb: string;
  kafkaBrokers: string;
  prefix: string;
}) {
  const { apiUrl, stream } = opts;
  const pedidos = await waitFor(
    async () => {
      const all = (await http<Pedido[]>("GET", `${apiUrl}/pedidos?limite=5000`)).body;
      return all.every((p) => p.status !== "AGUARDANDO_PAGAMENTO") && all;
    },
    { timeoutMs: 120_000, intervalMs: 500, what: "every order to reach a final state" },
  );
  // Nothing lost: every order a client was told about exists, and no order is missing its id.
  const ids = new Set(pedidos.map((p) => p.id));
  for (const id of [...stream.created, ...stream.unconfirmed])
    expect(ids.has(id), `order ${id}`).toBe(true);
  expect(pedidos.length).toBeGreaterThanOrEqual(stream.created.length + stream.unconfirmed.length);
  expect(pedidos.length).toBeLessThanOrEqual(
    stream.created.length + stream.unconfirmed.length + stream.unanswered,
  );

  // Decided once in effect, counted in the orders database: each result that moved an
  // order wrote one "resultado-aplicado" step on its timeline (a repeat writes
  // "resultado-repetido"), in the same transaction as the move.
  const db = new Database(opts.ordersDb, { readonly: true });
  const applied = new Map<number, number>();
  try {
    const rows = db
      .prepare<[], { pedido_id: number; n: number }>(
        "SELECT pedido_id, COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' GROUP BY pedido_id",
      )
      .all();
    for (const r of rows) applied.set(r.pedido_id, r.n);
  } finally {
    db.close();
  }
  for (const p of pedidos) {
    expect(applied.get(p.id), `order ${p.id} applied`).toBe(1);
    expect(p.processadoPor).toMatch(/^caixa-/);
    expect(p.status).toBe(p.valor <= 100 ? "PAGO" : "RECUSADO");
  }

  // Analytics, replayed from offset 0, agrees with the database.
  const cli = analyticsCli(opts.kafkaBrokers, opts.prefix, `audit-${Date.now()}`);
  const run = spawnSync(process.execPath, cli.args, {
    env: cli.env,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const painel = JSON.parse(run.stdout) as {
    pedidosVistos: number;
    pedidosPagos: number;
    receitaCentavos: number;
  };
  const pagos = pedidos.filter((p) => p.status === "PAGO");
  expect(painel.pedidosVistos).toBe(pedidos.length);
  expect(painel.pedidosPagos).toBe(pagos.length);
  expect(painel.receitaCentavos).toBe(pagos.reduce((sum, p) => sum + Math.round(p.valor * 100), 0));
  return { pedidos, painel };
}
