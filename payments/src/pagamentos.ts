import { setTimeout as wait } from "node:timers/promises";
import { fromCents, type Processado, toCents } from "@shop/contracts";
import { processOutput } from "@shop/service";
import { type Decisao, decide } from "./domain/decisao.ts";

export interface PagamentoUseCaseDeps {
  instancia: string;
  /** The simulated work before each decision (3 s by default; 0 in benchmarks). */
  decisionWaitMs: number;
  /** Prints the one line per decision a person reads (stdout by default). */
  print?: (line: string) => void;
}

/** How many recent decisions GET /pagamentos shows. */
const KEPT = 1000;

/** The decision line on stdout, through the process's shared per-turn writer. */
function printToStdout(): (line: string) => void {
  const stdout = processOutput(1);
  return (line) => stdout.write(`${line}\n`);
}

/** The payments instance's use cases: transport-free, the same for Kafka and for HTTP. */
export function pagamentoUseCases(deps: PagamentoUseCaseDeps) {
  const recent: Processado[] = [];
  const print = deps.print ?? printToStdout();
  // With no wait at all (benchmarks), no timer either: a 0 ms timer still costs about 1 ms.
  // Aborted (the group rebalancing), the wait rejects: nothing was decided yet.
  const work = (signal?: AbortSignal) =>
    deps.decisionWaitMs > 0 ? wait(deps.decisionWaitMs, undefined, { signal }) : Promise.resolve();

  return {
    /**
     * The AsyncAPI operation decidirPagamento: wait (a timer, so HTTP keeps answering), then
     * decide. With `signal` aborted during the wait (the record's partition may be moving at a
     * rebalance), it rejects and decides nothing: the partition's next owner will.
     */
    async decidePagamento(
      valor: number,
      signal?: AbortSignal,
    ): Promise<Decisao & { instancia: string }> {
      await work(signal);
      return { ...decide(toCents(valor)), instancia: deps.instancia };
    },

    /**
     * A decision that took effect (its result published, or answered over HTTP): kept for
     * GET /pagamentos and printed as the spec's decision line.
     */
    recordDecision(p: Processado, trace: string | null): void {
      recent.unshift(p);
      if (recent.length > KEPT) recent.pop();
      const where = p.origem === "kafka" ? `partition=${p.particao} offset=${p.offset}` : "http";
      print(
        `[${p.instancia}] ${where} pedido=${p.pedidoId} ` +
          `valor=${fromCents(toCents(p.valor)).toFixed(2)} decision=${p.status}` +
          (p.motivo && p.origem === "kafka" ? ` motivo="${p.motivo}"` : "") +
          ` instance=${p.instancia}` +
          // the trace of the order's request, to follow it across services
          (p.origem === "kafka" ? ` trace=${trace ?? "-"}` : ""),
      );
    },

    recentDecisions: () => [...recent],
  };
}

export type PagamentoUseCases = ReturnType<typeof pagamentoUseCases>;
