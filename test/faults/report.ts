import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../../infra/config.ts";
import { longestWithoutAck } from "../../lab/src/timing.ts";

/**
 * One row of docs/RELIABILITY.md's table: what a fault scenario did and what it found,
 * every number counted from the brokers' and the databases' state at its end.
 */
export interface FaultRow {
  scenario: string;
  /** What was injected. */
  fault: string;
  /** What shows that the fault landed where it was meant to (the scenario fails without it). */
  proof: string;
  /** Requests the client was answered 201/202 (or 200) for. */
  requests: number;
  /** Other answers worth reading beside the count (500 saved, unanswered, 503 repeated). */
  requestsNote?: string;
  /** Acknowledged requests that never reached a final state. */
  lost: number;
  /** Records or messages read again and recognised as repeats. */
  redeliveriesAbsorbed: number;
  /** Effects applied more than once, by kind; the explanation says which are expected. */
  doubled: Record<string, number>;
  /** How soon the shop moved again after the fault's end, and how long its backlog took. */
  recovery: Recovery;
  /** For the failover scenarios: what a client felt while the fault lasted. */
  timing?: FaultTiming;
  /** For the failover scenarios: how the orders placed during the fault went on. */
  progress?: FaultProgress;
}

/**
 * What the consumers did for the orders placed from the fault on, from the orders database
 * and the results topic: how long the slowest waited for its decision to be applied, and
 * how often the most decided one was decided (each ResultadoPagamento record is one).
 */
export interface FaultProgress {
  /** The longest from an order's saving to its result applied (criado_em → decidido_em). */
  longestOrderWaitMs: number;
  /**
   * The most ResultadoPagamento records of any one order of the run (those in flight when
   * the fault came too, which are the ones redone): 1 is once, more is redone work.
   */
  mostDecisions: number;
  /** How many orders were placed from the fault on. */
  orders: number;
}

/** FaultProgress of a run whose fault came at `from`. */
export function faultProgress(
  pedidos: { id: number; criado_em: string; decidido_em: string | null }[],
  decisionsPerPedido: Map<number, number>,
  from: number,
): FaultProgress {
  const since = pedidos.filter((p) => Date.parse(p.criado_em) >= from);
  const waits = since.map((p) =>
    p.decidido_em === null
      ? Number.POSITIVE_INFINITY
      : Date.parse(p.decidido_em) - Date.parse(p.criado_em),
  );
  return {
    longestOrderWaitMs: Math.max(0, ...waits),
    mostDecisions: Math.max(0, ...decisionsPerPedido.values()),
    orders: since.length,
  };
}

/**
 * A row's names, and what its fault's end was: the time to resume is counted from it. That
 * is the heal (`healedAt`: the broker back, the service restarted) unless `endedAt` says
 * otherwise: a node killed in a cluster ends the fault for the shop when the cluster carries
 * on without it, not when it comes back.
 */
export type ScenarioRow = Pick<FaultRow, "scenario" | "fault"> & { end?: string; endedAt?: number };

/** One request as the databases tell it: when it was made, when it became final (null: never). */
export interface Finality {
  madeAt: number;
  finalAt: number | null;
}

/**
 * Two figures instead of one "time to recover", which mixed how long the shop took to move
 * again with how long its backlog took to drain (issue 55).
 */
export interface Recovery {
  /** What the fault's end was: "Kafka back", "the kill + the 6 s session", ... */
  end: string;
  /** From the fault's end to the first request made final after it; null: none was. */
  resumeMs: number | null;
  /** Requests made before the fault's end and not final at it. */
  backlog: number;
  /** From the fault's end until the last of the backlog was final (0 with no backlog). */
  drainMs: number;
  /**
   * What the drain may take: the backlog at the rate the shop ran at (its decision time, per
   * instance) + 3 s. A test's shop decides in 100-300 ms where the spec's takes 3 s.
   */
  drainBoundMs: number;
}

/** Issue 55: every row's time to resume, event-log and broker alike. */
export const RESUME_BOUND_MS = 3_000;

/**
 * The Recovery of a run whose fault ended at `endedAt`, from each request's times (orders'
 * criado_em and decidido_em; payment requests' criada_em and concluida_em).
 */
export function recovery(
  requests: Finality[],
  endedAt: number,
  rate: { decisionMs: number; instances: number },
  end: string,
): Recovery {
  const after = requests
    .map((r) => r.finalAt)
    .filter((t): t is number => t !== null && t >= endedAt);
  const backlog = requests.filter(
    (r) => r.madeAt < endedAt && (r.finalAt === null || r.finalAt >= endedAt),
  );
  return {
    end,
    resumeMs: after.length === 0 ? null : Math.min(...after) - endedAt,
    backlog: backlog.length,
    drainMs:
      backlog.length === 0
        ? 0
        : Math.max(...backlog.map((r) => r.finalAt ?? Number.POSITIVE_INFINITY)) - endedAt,
    drainBoundMs: Math.ceil(backlog.length / rate.instances) * rate.decisionMs + RESUME_BOUND_MS,
  };
}

/**
 * A scenario's names as its row records them, and its Recovery: counted from `endedAt`
 * when the row gives one, else from the heal, and labelled with the row's `end`.
 */
export function scenarioRecovery(
  row: ScenarioRow,
  healedAt: number,
  requests: Finality[],
  rate: { decisionMs: number; instances: number },
): { names: Pick<FaultRow, "scenario" | "fault">; recovery: Recovery } {
  const { endedAt, end, ...names } = row;
  return {
    names,
    recovery: recovery(requests, endedAt ?? healedAt, rate, end ?? "the fault's end"),
  };
}

/** A database's time stamp (ISO text) as milliseconds; null stays null. */
export const stamp = (text: string | null): number | null =>
  text === null ? null : Date.parse(text);

/** One answer a client got: when it asked, how long the answer took, whether it was a yes. */
export interface Answer {
  at: number;
  ms: number;
  ok: boolean;
}

export interface FaultTiming {
  /** The longest span, from the fault on, with no request acknowledged. */
  longestWithoutAckMs: number;
  /** The 99th percentile of the answers' latency, over requests made during the fault. */
  p99Ms: number;
  /** How many answers that percentile is over. */
  answers: number;
}

/**
 * What the client felt between `from` (the fault) and `to` (its end): the longest gap
 * between acknowledgements, counted from the fault to the first acknowledgement after
 * its end, and the p99 latency of the requests made in between. A client that had stopped
 * asking, and had every answer, before the fault ended waited for nothing after that: the
 * gap is counted up to its last answer, not to the fault's end.
 */
export function faultTiming(answers: Answer[], from: number, to: number): FaultTiming {
  const lastAnswer = Math.max(from, ...answers.map((a) => a.at + a.ms));
  const longest = longestWithoutAck(
    answers.filter((a) => a.ok).map((a) => a.at + a.ms),
    from,
    Math.min(to, lastAnswer),
  );
  const during = answers
    .filter((a) => a.at >= from && a.at <= to)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const p99 = during.length === 0 ? 0 : (during[Math.ceil(0.99 * during.length) - 1] as number);
  return { longestWithoutAckMs: longest, p99Ms: p99, answers: during.length };
}

/** How many times each value occurs. */
/** A restarted service's own start, printed beside a row whose fault ends when it answers. */
export const startedIn = (askedAt: number, answeredAt: number) =>
  `started in ${((answeredAt - askedAt) / 1000).toFixed(1)} s`;

export function tally<T>(values: T[]): Map<T, number> {
  const m = new Map<T, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/** Occurrences beyond the first, over every value: the doubles. */
export const beyondFirst = (m: Map<unknown, number>) =>
  [...m.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);

/** Where this run's rows go (test-artifacts/ is not committed). */
export const REPORT_FILE = join(ROOT, "test-artifacts", "faults.jsonl");

export function recordRow(row: FaultRow): void {
  mkdirSync(dirname(REPORT_FILE), { recursive: true });
  appendFileSync(REPORT_FILE, `${JSON.stringify(row)}\n`);
}

export function readRows(): FaultRow[] {
  if (!existsSync(REPORT_FILE)) return [];
  return readFileSync(REPORT_FILE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as FaultRow);
}

const doubledText = (d: Record<string, number>) =>
  Object.entries(d)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ");

const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "never");

const resumeText = (r: Recovery) =>
  `${r.resumeMs === null ? "nothing final after it" : seconds(r.resumeMs)} (${r.end})`;

const drainText = (r: Recovery) =>
  r.backlog === 0
    ? "no backlog"
    : `${seconds(r.drainMs)} (${r.backlog} waiting, bound ${seconds(r.drainBoundMs)})`;

/** The rows as the Markdown table of docs/RELIABILITY.md. */
export function markdownTable(rows: FaultRow[]): string {
  const head =
    "| Scenario | Fault injected | Proof it hit | Requests | Lost | Re-deliveries absorbed | Doubled effects | Time to resume (from) | Time to drain (backlog, bound) | Longest without ack / p99 during the fault |\n" +
    "|---|---|---|---|---|---|---|---|---|---|";
  const timing = (t?: FaultTiming) =>
    t
      ? `${(t.longestWithoutAckMs / 1000).toFixed(1)} s / ${(t.p99Ms / 1000).toFixed(1)} s (${t.answers} answers)`
      : "—";
  const progress = (p?: FaultProgress) =>
    p
      ? `; of ${p.orders} orders placed from the fault on, the slowest decided in ${(p.longestOrderWaitMs / 1000).toFixed(1)} s; no order decided more than ${p.mostDecisions}×`
      : "";
  const lines = rows.map(
    (r) =>
      `| ${r.scenario} | ${r.fault} | ${r.proof} | ${r.requests}${r.requestsNote ? ` (${r.requestsNote})` : ""} | ${r.lost} | ${r.redeliveriesAbsorbed} | ${doubledText(r.doubled)} | ${resumeText(r.recovery)} | ${drainText(r.recovery)} | ${timing(r.timing)}${progress(r.progress)} |`,
  );
  return [head, ...lines].join("\n");
}

/**
 * The fault project's global setup: starts this run's table empty. The run's last lines
 * print it (test/summary-reporter.ts), above the failures, which a CI's tail must show.
 */
export default function setup(): void {
  rmSync(REPORT_FILE, { force: true });
}
