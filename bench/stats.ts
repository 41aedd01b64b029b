import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { ensureTopics } from "@shop/kafka";
import { Database } from "@shop/service";
import { Kafka, logLevel } from "kafkajs";
import { uniquePrefix } from "../harness/env.ts";
import { deleteTopicsWhere } from "../harness/kafka.ts";

/** The p-th percentile of an ascending list (nearest rank); 0 for an empty list. */
export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

/** The median of a benchmark's runs (the upper middle of an even count), as percentile 50. */
export function median(xs: readonly number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

/** The median of one figure over several runs' records. */
export function medianOf<R extends Record<string, number>>(
  runs: readonly R[],
  key: keyof R & string,
): number {
  return median(runs.map((r) => r[key] as number));
}

/**
 * Start -> end latencies (ms) read from a service's SQLite file, and the span from the
 * first start to the last end. `sql` selects the two ISO instants as columns c and d.
 */
export function latenciesFromDb(dbPath: string, sql: string) {
  const db = new Database(dbPath, { readonly: true });
  const rows = db.prepare(sql).all() as { c: string; d: string }[];
  db.close();
  const ms = rows.map((r) => Date.parse(r.d) - Date.parse(r.c)).sort((a, b) => a - b);
  // A loop, not Math.min(...rows): 20,000 arguments are near the engine's limit.
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const r of rows) {
    first = Math.min(first, Date.parse(r.c));
    last = Math.max(last, Date.parse(r.d));
  }
  return { n: rows.length, p50: percentile(ms, 50), p99: percentile(ms, 99), spanMs: last - first };
}

/**
 * Where the time goes, from the event-log orders API's timelines: p50/p99 (ms) of each
 * step from the one before (created -> event acknowledged -> decided -> result applied).
 */
export function stepsFromDb(
  dbPath: string,
  afterId = 0,
): Record<string, { p50: number; p99: number }> {
  const db = new Database(dbPath, { readonly: true });
  const rows = db
    .prepare(
      `SELECT p.criado_em AS criado,
              (SELECT enviado_em FROM outbox o WHERE o.pedido_id = p.id AND particao IS NOT NULL LIMIT 1) AS confirmado,
              (SELECT em FROM historico h WHERE h.pedido_id = p.id AND etapa = 'decidido' LIMIT 1) AS decidido,
              (SELECT em FROM historico h WHERE h.pedido_id = p.id AND etapa = 'resultado-aplicado' LIMIT 1) AS aplicado
       FROM pedidos p WHERE p.decidido_em IS NOT NULL AND p.id > ?`,
    )
    .all(afterId) as {
    criado: string;
    confirmado: string | null;
    decidido: string | null;
    aplicado: string | null;
  }[];
  db.close();
  const stepMs = (from: keyof (typeof rows)[number], to: keyof (typeof rows)[number]) => {
    const ms = rows
      .filter((r) => r[from] && r[to])
      .map((r) => Date.parse(r[to] as string) - Date.parse(r[from] as string))
      .sort((a, b) => a - b);
    return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
  };
  return {
    "created->acknowledged": stepMs("criado", "confirmado"),
    "acknowledged->decided": stepMs("confirmado", "decidido"),
    "decided->applied": stepMs("decidido", "aplicado"),
  };
}

/** sysconf(_SC_CLK_TCK): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** The fields of a `/proc/<pid>/stat` text after the command name (which may hold spaces and ")"). */
const statFields = (stat: string) => stat.slice(stat.lastIndexOf(") ") + 2).split(" ");

/** User + system CPU ticks of a stat's fields: utime and stime, the 12th and 13th after the name. */
const cpuTicks = (fields: string[]) => Number(fields[11]) + Number(fields[12]);

/** User + system CPU ticks of a `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` text. */
const ticksOf = (stat: string): number => cpuTicks(statFields(stat));

/** CPU time (ms, user + system) a process has used so far; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    return (ticksOf(readFileSync(`/proc/${pid}/stat`, "utf8")) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU time (ms) a group of processes has used so far. */
const cpuMsOf = (pids: readonly number[]) => pids.reduce((s, p) => s + cpuMs(p), 0);

/**
 * CPU time (ms) of process trees so far: each root's own, what its children that ended
 * used (cutime and cstime, once it has reaped them), and what its children alive now have
 * used. A server that forks a process per connection and workers that come and go
 * (PostgreSQL's backends, its autovacuum workers) is measured whole this way: summing the
 * processes alive at the start read a worker that ended during the run as CPU given back,
 * and missed every process started during it (issue 49: PostgreSQL read -0.16 ms an
 * order in one 20 s run).
 */
export function treeCpuMs(roots: readonly number[]): number {
  let ticks = 0;
  for (const root of roots) {
    try {
      const f = statFields(readFileSync(`/proc/${root}/stat`, "utf8"));
      // and cutime, cstime: the 14th and 15th
      ticks += cpuTicks(f) + Number(f[13]) + Number(f[14]);
    } catch {
      // the root itself is gone: its tree is no longer measured
    }
  }
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = statFields(readFileSync(`/proc/${d}/stat`, "utf8"));
      if (roots.includes(Number(f[1]))) ticks += cpuTicks(f);
    } catch {
      // the process ended between the listing and the read; its parent has its CPU now
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The parents of these processes that are not among them: the roots of their trees. */
export function rootsOf(pids: readonly number[]): number[] {
  const parents = new Set<number>();
  for (const pid of pids) {
    try {
      const parent = Number(statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))[1]);
      if (!pids.includes(parent)) parents.add(parent);
    } catch {
      // gone
    }
  }
  return [...parents];
}

/** CPU ticks each JIT compiler thread ("C1/C2 CompilerThread") of these JVMs has used, by pid/tid. */
function jitTicks(pids: readonly number[]): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of pids) {
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const t of threads) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
        if (!/^\d+ \(C[12] CompilerThre/.test(stat)) continue;
        ticks.set(`${pid}/${t}`, ticksOf(stat));
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return ticks;
}

/**
 * The share of these JVMs' CPU that their JIT compilers took from this call to share().
 * The JVM starts and stops compiler threads as the work comes and goes, so the share
 * counts the threads alive at share() (a thread that ended took its ticks with it: the
 * share is a floor, never negative).
 */
export function measureJit(pids: readonly number[]) {
  const [before, all] = [jitTicks(pids), cpuMsOf(pids)];
  return {
    share() {
      let ticks = 0;
      for (const [thread, now] of jitTicks(pids)) ticks += now - (before.get(thread) ?? 0);
      return (ticks * 1000) / TICKS_PER_SECOND / Math.max(1, cpuMsOf(pids) - all);
    },
  };
}

/** Command lines of the brokers: the Kafka broker's JVM, RabbitMQ's Erlang VM. */
export const KAFKA_BROKER = /\0kafka\.Kafka\0/;
export const RABBITMQ = /beam\.smp/;

/** The processes whose command line matches, e.g. KAFKA_BROKER or RABBITMQ. */
export function pidsOf(pattern: RegExp): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return pattern.test(readFileSync(`/proc/${d}/cmdline`, "utf8"));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * CPU used by named groups of processes from this call to stop(), per unit of work:
 * where a benchmark's time goes, and the rate the machine's cores could sustain at that
 * cost if nothing else ran (cores x 1000 ms per second, divided by the ms per unit).
 * stop() may be called more than once; each reads from the same start.
 */
export function measureCpu(groups: Record<string, number[] | (() => number)>) {
  const read = (pids: number[] | (() => number)) =>
    typeof pids === "function" ? pids() : cpuMsOf(pids);
  const start = Object.fromEntries(Object.entries(groups).map(([g, pids]) => [g, read(pids)]));
  return {
    stop(units: number) {
      const perUnit = Object.fromEntries(
        Object.entries(groups).map(([g, pids]) => [
          g,
          (read(pids) - (start[g] ?? 0)) / Math.max(1, units),
        ]),
      );
      const total = Object.values(perUnit).reduce((s, v) => s + v, 0);
      const groupsText = Object.entries(perUnit)
        .map(([g, ms]) => `${g} ${ms.toFixed(2)}`)
        .join(", ");
      return {
        perUnit,
        total,
        text: `CPU ms per unit: ${groupsText}; ceiling at that cost ${Math.round((cpus().length * 1000) / total)}/s`,
      };
    },
  };
}

/**
 * Deletes the topics a benchmark wrote under its prefix, once it has measured them. They
 * were left behind before: a session of benchmarks left Kafka holding 400 topics and
 * 1.3 GB (a replay writes a million records each time), and the runs after were slower.
 */
export async function deleteTopics(brokers: string, prefix: string): Promise<void> {
  await deleteTopicsWhere(brokers, (t) => t.startsWith(prefix));
}

/**
 * The topics of one run of the bare pipeline's programs (bench/bare-pipeline.ts), made now
 * under a prefix of their own, and the environment its programs read them from; `dispose`
 * deletes them. The intake's baseline runs its orders program alone, the pipeline's all.
 */
export async function barePipelineKafka(brokers: string, name: string) {
  const prefix = uniquePrefix(name);
  const names = kafkaNames(prefix);
  const kafka = new Kafka({ brokers: brokers.split(","), logLevel: logLevel.ERROR });
  await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
  return {
    prefix,
    env: (extra: Record<string, string>) => ({
      KAFKA_BROKERS: brokers,
      TOPIC_PEDIDOS: names.topics.pedidosCriados,
      TOPIC_RESULTADOS: names.topics.pagamentosResultados,
      ...extra,
    }),
    dispose: () => deleteTopics(brokers, prefix),
  };
}
