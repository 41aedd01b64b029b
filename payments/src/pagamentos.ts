import { setTimeout as wait } from "node:timers/promises";
import { fromCents, type Processado, toCents } from "@shop/contracts";
import { processOutput } from "@shop/service";
import { type Decisao, decide } from "./domain/decisao.ts";

/**
 * What the payments instance's use cases work with, made once by `pagamentoPorts`
 * (src/server.ts); each use case below takes it as its first argument, as the orders
 * API's do (orders-api/src/pedidos.ts). Transport-free: the same for Kafka and for HTTP.
 */
export interface PagamentoPorts {
  instancia: string;
  /** The simulated work before each decision (3 s by default; 0 in benchmarks). */
  decisionWaitMs: number;
  /** Prints the one line per decision a person reads (stdout by default). */
  print: (line: string) => void;
  /** The latest decisions that took effect, newest first (GET /pagamentos). */
  recent: Processado[];
}

/** How many recent decisions GET /pagamentos shows. */
const KEPT = 1000;

/** The decision line on stdout, through the process's shared per-turn writer. */
function printToStdout(): (line: string) => void {
  const stdout = processOutput(1);
  return (line) => stdout.write(`${line}\n`);
}

export function pagamentoPorts(deps: {
  instancia: string;
  decisionWaitMs: number;
  print?: (line: string) => void;
}): PagamentoPorts {
  return { ...deps, print: deps.print ?? printToStdout(), recent: [] };
}

/**
 * The AsyncAPI operation decidirPagamento: wait (a timer, so HTTP keeps answering), then
 * decide. With `signal` aborted during the wait (the record's partition may be moving at a
 * rebalance), it rejects and decides nothing: the partition's next owner will. `waitedMs`:
 * what this instance already waited for the same record before it let it go.
 */
export async function decidePagamento(
  ports: PagamentoPorts,
  valor: number,
  signal?: AbortSignal,
  waitedMs = 0,
): Promise<Decisao & { instancia: string }> {
  const waitMs = ports.decisionWaitMs - waitedMs;
  // With no wait at all (benchmarks), no timer either: a 0 ms timer still costs about 1 ms.
  if (waitMs > 0) await wait(waitMs, undefined, { signal });
  return { ...decide(toCents(valor)), instancia: ports.instancia };
}

/**
 * A decision that took effect (its result published, or answered over HTTP): kept for
 * GET /pagamentos and printed as the spec's decision line.
 */
export function recordDecision(ports: PagamentoPorts, p: Processado, trace: string | null): void {
  ports.recent.unshift(p);
  if (ports.recent.length > KEPT) ports.recent.pop();
  const where = p.origem === "kafka" ? `partition=${p.particao} offset=${p.offset}` : "http";
  ports.print(
    `[${p.instancia}] ${where} pedido=${p.pedidoId} ` +
      `valor=${fromCents(toCents(p.valor)).toFixed(2)} decision=${p.status}` +
      (p.motivo && p.origem === "kafka" ? ` motivo="${p.motivo}"` : "") +
      ` instance=${p.instancia}` +
      // the trace of the order's request, to follow it across services
      (p.origem === "kafka" ? ` trace=${trace ?? "-"}` : ""),
  );
}

export const recentDecisions = (ports: PagamentoPorts) => [...ports.recent];
