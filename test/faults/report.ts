import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../../infra/config.ts";

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
  /** From the fault's end (broker back, service restarted, kill) to every request final. */
  recoverMs: number;
}

/** How many times each value occurs. */
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

/** The rows as the Markdown table of docs/RELIABILITY.md. */
export function markdownTable(rows: FaultRow[]): string {
  const head =
    "| Scenario | Fault injected | Proof it hit | Requests | Lost | Re-deliveries absorbed | Doubled effects | Time to recover |\n" +
    "|---|---|---|---|---|---|---|---|";
  const lines = rows.map(
    (r) =>
      `| ${r.scenario} | ${r.fault} | ${r.proof} | ${r.requests}${r.requestsNote ? ` (${r.requestsNote})` : ""} | ${r.lost} | ${r.redeliveriesAbsorbed} | ${doubledText(r.doubled)} | ${(r.recoverMs / 1000).toFixed(1)} s |`,
  );
  return [head, ...lines].join("\n");
}

/** The fault project's global setup: starts this run's table empty, prints it at the end. */
export default function setup(): () => void {
  rmSync(REPORT_FILE, { force: true });
  return () => {
    const rows = readRows();
    if (rows.length > 0) console.log(`\nFault scenarios of this run:\n\n${markdownTable(rows)}\n`);
  };
}
