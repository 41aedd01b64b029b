import { execFile } from "node:child_process";
import { kafkaNames } from "@shop/contracts";
import { expect } from "vitest";
import { queryOrdersDb } from "../../harness/orders-store.ts";
import { type KafkaRecord, readTopic } from "../helpers/kafka.ts";
import {
  analyticsCli,
  http,
  ServiceProcess,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";
import {
  type Answer,
  beyondFirst,
  type FaultProgress,
  type FaultTiming,
  faultProgress,
  faultTiming,
  RESUME_BOUND_MS,
  recordRow,
  type ScenarioRow,
  scenarioRecovery,
  stamp,
  tally,
} from "./report.ts";

/** What a client saw for each order it tried to place. */
export interface Stream {
  created: number[];
  /** 500: saved, event not confirmed in time. */
  unconfirmed: number[];
  /** How long each 500 took to come (the spec's 5 s confirmation wait, plus the request). */
  unconfirmedMs: number[];
  /** No answer (the API was down or killed): may or may not be saved. */
  unanswered: number;
  /** 503: refused, nothing saved (the database full); the error each carried. */
  refused: string[];
  /** Every answer in order: when asked, how long it took, whether it was a 201. */
  answers: Answer[];
  done: Promise<void>;
}

/**
 * Places `total` orders, `concurrency` at a time, while a fault happens. Half are under
 * 100.00 and half over, so both decisions occur. Each request has its own `cliente`, so
 * that two orders for one request show in the database.
 */
export function streamOfOrders(
  baseUrl: () => string,
  total: number,
  concurrency = 4,
  pauseMs = 50,
): Stream {
  const s: Stream = {
    created: [],
    unconfirmed: [],
    unconfirmedMs: [],
    unanswered: 0,
    refused: [],
    answers: [],
    done: Promise.resolve(),
  };
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
      let res: Awaited<ReturnType<typeof http<{ id: number; erro?: string }>>> | null = null;
      const at = Date.now();
      try {
        res = await http<{ id: number; erro?: string }>("POST", `${baseUrl()}/pedidos`, body);
      } catch {
        s.unanswered++;
      }
      s.answers.push({ at, ms: Date.now() - at, ok: res?.status === 201 });
      if (res?.status === 201) s.created.push(res.body.id);
      else if (res?.status === 500) {
        s.unconfirmed.push(Number(res.body.erro?.match(/order (\d+)/)?.[1]));
        s.unconfirmedMs.push(Date.now() - at);
      } else if (res?.status === 503) s.refused.push(res.body.erro ?? "");
      // Anything else fails at once, not as a time-out.
      else if (res)
        expect.fail(`POST /pedidos answered ${res.status}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
  s.done = Promise.all(Array.from({ length: concurrency }, worker)).then(() => {});
  return s;
}

interface PedidoRow {
  id: number;
  cliente: string;
  status: string;
  valor_centavos: number;
  processado_por: string | null;
  criado_em: string;
  decidido_em: string | null;
}

/**
 * The event-log edition's state: the orders database (a SQLite file or a postgres:// URL)
 * and both topics, read now.
 */
export async function eventLogState(opts: { ordersDb: string; brokers: string; prefix: string }) {
  const names = kafkaNames(opts.prefix);
  // A SQLite file, or the PostgreSQL database several instances share.
  const pedidos = await queryOrdersDb<PedidoRow>(
    opts.ordersDb,
    "SELECT id, cliente, status, valor_centavos, processado_por, criado_em, decidido_em FROM pedidos ORDER BY id",
  );
  const steps = await queryOrdersDb<{ pedido_id: number; etapa: string }>(
    opts.ordersDb,
    "SELECT pedido_id, etapa FROM historico WHERE etapa IN ('resultado-aplicado', 'resultado-repetido')",
  );
  const [criados, resultados] = await Promise.all([
    readTopic(opts.brokers, names.topics.pedidosCriados),
    readTopic(opts.brokers, names.topics.pagamentosResultados),
  ]);
  return {
    pedidos,
    /** Results that moved an order, per order (in the move's own transaction). */
    applied: tally(steps.filter((s) => s.etapa === "resultado-aplicado").map((s) => s.pedido_id)),
    /** Results the orders API read again and recognised as repeats, per order. */
    repeated: tally(steps.filter((s) => s.etapa === "resultado-repetido").map((s) => s.pedido_id)),
    criados,
    resultados,
    /** PedidoCriado records per order. */
    criadosPerPedido: tally(criados.map((r) => Number(r.value.pedidoId))),
    /** Decisions (ResultadoPagamento records) per order, by any payments instance. */
    decisionsPerPedido: tally(resultados.map((r) => Number(r.value.pedidoId))),
  };
}

export type EventLogState = Awaited<ReturnType<typeof eventLogState>>;

/**
 * PedidoCriado records of the orders given, at or past the group's committed offset of
 * their partition: decided work that a kill left uncommitted, which the partition's next
 * owner reads again.
 */
export function uncommittedRecords(
  state: EventLogState,
  committed: Map<number, number>,
  pedidoIds: Set<number>,
): KafkaRecord[] {
  return state.criados.filter(
    (r) => pedidoIds.has(Number(r.value.pedidoId)) && r.offset >= (committed.get(r.partition) ?? 0),
  );
}

/** The orders a payments instance decided (its ResultadoPagamento records), by instancia. */
export const decidedBy = (state: EventLogState, instancia: string) =>
  new Set(
    state.resultados
      .filter((r) => r.value.instancia === instancia)
      .map((r) => Number(r.value.pedidoId)),
  );

/**
 * The proof of a fault that kept Kafka from confirming: orders answered 500 while it held
 * (`unconfirmed`, saved with their events in the outbox), every one published after.
 */
export const publishedAfter =
  (unconfirmed: number[], while_: string): Proof =>
  (state) => {
    const published = unconfirmed.filter((id) => state.criadosPerPedido.has(id));
    return {
      hit: unconfirmed.length > 0 && published.length === unconfirmed.length,
      text: `${unconfirmed.length} orders answered 500 while ${while_}; ${published.length} of them published by the outbox after`,
    };
  };

/** What a scenario says about its fault once the state is read; a miss fails it. */
export type Proof = (
  state: EventLogState,
) => { hit: boolean; text: string } | Promise<{ hit: boolean; text: string }>;

/**
 * The end of an event-log scenario. Waits until every order is final (or 120 s), then
 * counts from state, never from logs: lost requests; repeats absorbed; doubled effects
 * (two orders for one request, two PedidoCriado records for one order, two decisions for
 * one order, two results applied to one order); analytics replayed from offset 0 in a new
 * group against the database. Asserts what must be zero, records the row, returns the state.
 */
export async function finishEventLogScenario(opts: {
  apiUrl: string;
  stream: Stream;
  ordersDb: string;
  kafkaBrokers: string;
  prefix: string;
  row: ScenarioRow;
  proof: Proof;
  /**
   * When the fault ended (broker back, service restarted; for a death the shop cannot see,
   * such as a kill -9 or SIGSTOP of a payments instance, the end of its consumer session).
   */
  healedAt: number;
  /** The rate the shop decided at: its payments' decision time and how many decide. */
  rate: { decisionMs: number; instances: number };
  /** When it began: given, the row reports the client's timing in between (faultTiming). */
  faultAt?: number;
}): Promise<EventLogState & { timing?: FaultTiming; progress?: FaultProgress }> {
  const { stream } = opts;
  const acknowledged = [...stream.created, ...stream.unconfirmed];
  const open = async () =>
    (await http<{ id: number; status: string }[]>("GET", `${opts.apiUrl}/pedidos?limite=5000`))
      .body;
  await waitFor(async () => (await open()).every((p) => p.status !== "AGUARDANDO_PAGAMENTO"), {
    timeoutMs: 120_000,
    intervalMs: 500,
    what: "every order to reach a final state",
  }).catch(() => {}); // what is still open is counted as lost below
  const readState = () =>
    eventLogState({ ordersDb: opts.ordersDb, brokers: opts.kafkaBrokers, prefix: opts.prefix });
  // An order is final with its first result; a second decision of it (at-least-once) may
  // still be on its way to the orders API. Waited for as state, up to 15 s: every result in
  // the topic read by the orders API (applied or repeated), as asserted below.
  const everyResultRead = (st: EventLogState) =>
    st.pedidos.every(
      (p) =>
        (st.applied.get(p.id) ?? 0) + (st.repeated.get(p.id) ?? 0) >=
        (st.decisionsPerPedido.get(p.id) ?? 0),
    );
  let state = await readState();
  const readBy = Date.now() + 15_000;
  while (!everyResultRead(state) && Date.now() < readBy) {
    await new Promise((res) => setTimeout(res, 500));
    state = await readState();
  }
  const byId = new Map(state.pedidos.map((p) => [p.id, p]));
  const lost = acknowledged.filter((id) => {
    const p = byId.get(id);
    return !p || p.status === "AGUARDANDO_PAGAMENTO";
  });
  const doubled = {
    orders: beyondFirst(tally(state.pedidos.map((p) => p.cliente))),
    "PedidoCriado records": beyondFirst(state.criadosPerPedido),
    decisions: beyondFirst(state.decisionsPerPedido),
    "results applied": beyondFirst(state.applied),
  };
  const redeliveriesAbsorbed = [...state.repeated.values()].reduce((a, b) => a + b, 0);
  const proof = await opts.proof(state);
  const during =
    opts.faultAt === undefined
      ? undefined
      : {
          timing: faultTiming(stream.answers, opts.faultAt, opts.healedAt),
          progress: faultProgress(state.pedidos, state.decisionsPerPedido, opts.faultAt),
        };
  const { names, recovery } = scenarioRecovery(
    opts.row,
    opts.healedAt,
    state.pedidos.map((p) => ({ madeAt: Date.parse(p.criado_em), finalAt: stamp(p.decidido_em) })),
    opts.rate,
  );
  recordRow({
    ...names,
    proof: proof.hit ? proof.text : `NOT HIT: ${proof.text}`,
    requests: stream.created.length,
    requestsNote: [
      stream.unconfirmed.length > 0 ? `${stream.unconfirmed.length} more answered 500, saved` : "",
      stream.unanswered > 0 ? `${stream.unanswered} unanswered` : "",
      stream.refused.length > 0 ? `${stream.refused.length} refused with 503, nothing saved` : "",
    ]
      .filter(Boolean)
      .join("; "),
    lost: lost.length,
    redeliveriesAbsorbed,
    doubled,
    recovery,
    ...(during ?? {}),
  });

  expect(proof.hit, `the fault did not hit: ${proof.text}`).toBe(true);
  expect(lost, "acknowledged orders never final").toEqual([]);
  // Issue 55: the shop moves again within 3 s of the fault's end (1.8 s at most measured).
  expect(recovery.resumeMs ?? 0, `time to resume from ${recovery.end}`).toBeLessThanOrEqual(
    RESUME_BOUND_MS,
  );
  // At most one order per client request (each has its own cliente), and none unasked for.
  expect(doubled.orders).toBe(0);
  expect(state.pedidos.length).toBeLessThanOrEqual(acknowledged.length + stream.unanswered);
  for (const p of state.pedidos) {
    // Decided once in effect: one result moved each order, whatever was re-read.
    expect(state.applied.get(p.id), `order ${p.id}: results applied`).toBe(1);
    expect(p.processado_por).toMatch(/^caixa-/);
    expect(p.status).toBe(p.valor_centavos <= 100_00 ? "PAGO" : "RECUSADO");
    // Every decision published reached the orders API: applied once, the rest repeats.
    expect(
      (state.applied.get(p.id) ?? 0) + (state.repeated.get(p.id) ?? 0),
      `order ${p.id}: results read`,
    ).toBeGreaterThanOrEqual(state.decisionsPerPedido.get(p.id) ?? 0);
  }

  // Analytics, replayed from offset 0, agrees with the database.
  const cli = analyticsCli(opts.kafkaBrokers, opts.prefix, `audit-${Date.now()}`);
  // Not spawnSync: a TCP proxy in this process must go on forwarding while the CLI reads.
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      execFile(
        process.execPath,
        cli.args,
        { env: cli.env, encoding: "utf8", timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({
            status: error ? (typeof error.code === "number" ? error.code : 1) : 0,
            stdout,
            stderr,
          }),
      );
    },
  );
  expect(run.status, run.stderr).toBe(0);
  const painel = JSON.parse(run.stdout) as {
    pedidosVistos: number;
    pedidosPagos: number;
    receitaCentavos: number;
  };
  const pagos = state.pedidos.filter((p) => p.status === "PAGO");
  expect(painel.pedidosVistos).toBe(state.pedidos.length);
  expect(painel.pedidosPagos).toBe(pagos.length);
  expect(painel.receitaCentavos).toBe(pagos.reduce((sum, p) => sum + p.valor_centavos, 0));
  return { ...state, ...during };
}

/**
 * One scenario's shop on a Kafka broker (or cluster): its own topic prefix and orders
 * database, services started as real processes (kept in `running`, for the file to stop),
 * and the end-of-scenario count (finishEventLogScenario) against the API that runs last.
 */
export function eventLogShop(
  running: ServiceProcess[],
  name: string,
  {
    dbPath = tempDb(name),
    databaseUrl,
    broker,
  }: {
    dbPath?: string;
    /** PostgreSQL, which several orders API instances share, instead of the SQLite file. */
    databaseUrl?: string;
    broker: { brokers: string };
  },
) {
  const ordersDb = databaseUrl ?? dbPath;
  const store: Record<string, string> = databaseUrl
    ? { DATABASE_URL: databaseUrl }
    : { DB_PATH: dbPath };
  const prefix = uniquePrefix(name);
  const names = kafkaNames(prefix);
  const env = (extra: Record<string, string> = {}) => ({
    ...serviceEnv(prefix, extra),
    KAFKA_BROKERS: broker.brokers,
  });
  const start = async (
    what: "orders-api" | "payments",
    label: string,
    extra: Record<string, string> = {},
  ) => {
    const p = await ServiceProcess.start(
      label,
      what,
      env(what === "orders-api" ? { ...store, ...extra } : extra),
    );
    running.push(p);
    return p;
  };
  /**
   * The drain's rate: the decision time of the payments instance started last, the one that
   * decides after the fault in every scenario here (the survivor of a kill, the newcomer of
   * a join, the restarted one).
   */
  let decisionMs = 100;
  const payments = (instancia: string, extra: Record<string, string> = {}) => {
    const settings = { INSTANCIA: instancia, TEMPO_DECISAO_MS: "100", ...extra };
    decisionMs = Number(settings.TEMPO_DECISAO_MS);
    return start("payments", instancia, settings);
  };
  const finish = (
    api: ServiceProcess,
    stream: Stream,
    row: ScenarioRow,
    proof: Proof,
    healedAt: number,
    faultAt?: number,
    /** How many payments instances decide after the fault (1 unless said). */
    instances = 1,
  ) =>
    finishEventLogScenario({
      ...(faultAt === undefined ? {} : { faultAt }),
      rate: { decisionMs, instances },
      apiUrl: api.url(),
      stream,
      ordersDb,
      kafkaBrokers: broker.brokers,
      prefix,
      row,
      proof,
      healedAt,
    });
  return { names, dbPath, start, payments, finish };
}
