import Database from "better-sqlite3";
import type { Express } from "express";

/**
 * What the bare programs (bare-pipeline.ts, bare-broker.ts) share: their
 * settings, their database, an order's body checked by hand, the 201 body, and listening
 * where the benchmark reads it.
 */

/** A setting the benchmark must give. */
export function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`a bare program needs ${name}`);
  return value;
}

/** The program's SQLite file, durable as the shop's stores: WAL, synchronous=FULL. */
export function bareDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  return db;
}
export interface BareOrder {
  cliente: string;
  item: string;
  quantidade: number;
  valorCentavos: number;
  criadoEm: string;
}

/** The body of POST /pedidos checked by hand, its total in cents; null when it is not one. */
export function bareOrder(body: unknown): BareOrder | null {
  const { cliente, item, quantidade, precoUnitario } = (body ?? {}) as Record<string, unknown>;
  if (
    typeof cliente !== "string" ||
    typeof item !== "string" ||
    typeof quantidade !== "number" ||
    !Number.isInteger(quantidade) ||
    typeof precoUnitario !== "number" ||
    precoUnitario <= 0
  )
    return null;
  return {
    cliente,
    item,
    quantidade,
    valorCentavos: Math.round(precoUnitario * 100) * quantidade,
    criadoEm: new Date().toISOString(),
  };
}

/** The 201 body of a new order, as the orders API answers it. */
export const bareAnswer = (id: number, o: BareOrder) => ({
  id,
  cliente: o.cliente,
  item: o.item,
  quantidade: o.quantidade,
  valor: o.valorCentavos / 100,
  status: "AGUARDANDO_PAGAMENTO",
  motivo: null,
  processadoPor: null,
  criadoEm: o.criadoEm,
});

/**
 * The shop's cheapest design for a turn's requests, written plainly: the units handed over
 * in one event-loop turn go to `flush` together (one transaction and one fsync, one produce
 * request), and each caller gets its own result. A failed flush fails each of its callers.
 */
export function perTurn<T, R>(flush: (units: T[]) => Promise<R[]> | R[]): (unit: T) => Promise<R> {
  let waiting: { unit: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  const run = async () => {
    const turn = waiting;
    waiting = [];
    try {
      const results = await flush(turn.map((w) => w.unit));
      for (const [i, w] of turn.entries()) w.resolve(results[i] as R);
    } catch (error) {
      for (const w of turn) w.reject(error);
    }
  };
  return (unit) =>
    new Promise<R>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(run);
      waiting.push({ unit, resolve, reject });
    });
}

/**
 * Listens on a free port and prints it, as ServiceProcess waits to read. A SIGTERM ends the
 * process by exit(), not by the signal: Node writes a --cpu-prof profile only at an exit
 * (`npm run bench -- --profile` profiles the bare programs beside the services).
 */
export function listen(app: Express, what: string): void {
  process.once("SIGTERM", () => process.exit(0));
  const server = app.listen(0, "127.0.0.1", () => {
    const address = server.address();
    console.log(
      `bare ${what} listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    );
  });
}
