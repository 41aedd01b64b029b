import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { ensureTopics } from "@shop/kafka";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { freePort } from "../../../infra/ports.ts";
import { runTool, STACK_FRAME } from "../../../test/helpers/cli.ts";
import { aPedidoCriado, aResultado } from "../../../test/helpers/fixtures.ts";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, uniquePrefix } from "../../../test/helpers/shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { runAnalytics } from "../../src/analytics.ts";
import type { Dashboard } from "../../src/domain/orders-view.ts";
import type { DashboardJson } from "../../src/output.ts";
import { AnalyticsOutput } from "../../src/output.ts";

const prefix = uniquePrefix("analytics");
const nomes = kafkaNames(prefix);
let producer: Producer;
let nextId = 1;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The CLI as a person runs it; GRUPO is given without the test prefix, which the CLI adds. */
function cli(grupo: string, ...args: string[]): Promise<Run> {
  return cliWith({ KAFKA_BROKERS: shopConfig().kafka.brokers.join(","), GRUPO: grupo }, ...args);
}

async function cliWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const started = Date.now();
  const run = await runTool(
    "analytics/src/main.ts",
    args,
    { KAFKA_PREFIXO: prefix, ...env },
    60_000,
  );
  return { code: run.code, stdout: run.out, stderr: run.err, ms: Date.now() - started };
}

async function painelJson(grupo: string, ...args: string[]) {
  const run = await cli(grupo, "--until-caught-up", "--json", ...args);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as DashboardJson;
}

async function criado(item: string, quantidade: number, valor: number): Promise<number> {
  const pedidoId = nextId++;
  await producer.send({
    topic: nomes.topics.pedidosCriados,
    acks: -1,
    messages: [
      {
        key: String(pedidoId),
        value: JSON.stringify(aPedidoCriado({ pedidoId, cliente: "c", item, quantidade, valor })),
      },
    ],
  });
  return pedidoId;
}

async function resultado(pedidoId: number, status: "APROVADO" | "RECUSADO") {
  await producer.send({
    topic: nomes.topics.pagamentosResultados,
    acks: -1,
    messages: [
      {
        key: String(pedidoId),
        value: JSON.stringify(
          aResultado({
            pedidoId,
            status,
            motivo: status === "RECUSADO" ? "limite do cartão de teste" : null,
          }),
        ),
      },
    ],
  });
}

/** A mixed history: the expected figures are computed here in cents, independently. */
const history: {
  item: string;
  quantidade: number;
  valor: number;
  status: "APROVADO" | "RECUSADO";
}[] = [
  { item: "caneca", quantidade: 3, valor: 56.7, status: "APROVADO" },
  { item: "livro", quantidade: 1, valor: 0.1, status: "APROVADO" },
  { item: "livro", quantidade: 2, valor: 0.2, status: "APROVADO" },
  { item: "tv", quantidade: 1, valor: 999.99, status: "RECUSADO" },
  { item: "caneca", quantidade: 1, valor: 18.9, status: "APROVADO" },
  { item: "bule", quantidade: 4, valor: 100, status: "APROVADO" },
  { item: "sofa", quantidade: 2, valor: 100.02, status: "RECUSADO" },
  { item: "livro", quantidade: 1, valor: 19.99, status: "APROVADO" },
];

beforeAll(async () => {
  const kafka = testKafka();
  await ensureTopics(kafka, pedidoTopics(nomes), REPLICATION_FACTOR);
  producer = kafka.producer();
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
});

describe("The analytics CLI", () => {
  let early: Dashboard | null = null;
  const stopEarly = new AbortController();
  let earlyRun: Promise<unknown>;

  it("When a reader was there from the start and a late reader joins in a new group, then both show the same dashboard", async () => {
    let earlyError: unknown = null;
    earlyRun = runAnalytics({
      brokers: shopConfig().kafka.brokers,
      prefix,
      grupo: `${prefix}analytics`,
      replay: false,
      untilCaughtUp: false,
      output: new AnalyticsOutput({ json: false, quiet: true }),
      log: capturingLogger("analytics"),
      signal: stopEarly.signal,
      onDashboard: (p) => {
        early = p;
      },
    }).catch((error: unknown) => {
      earlyError = error; // reported by the wait below instead of as an unhandled rejection
    });
    for (const h of history) {
      const id = await criado(h.item, h.quantidade, h.valor);
      await resultado(id, h.status);
    }
    await waitFor(
      () => {
        if (earlyError) throw earlyError;
        return early?.pedidosVistos === history.length && early.pedidosPagos === 6;
      },
      {
        what: "the early reader's dashboard",
      },
    );
    stopEarly.abort();
    await earlyRun;
    expect(earlyError).toBeNull();

    const late = await painelJson("late");
    expect(late.registrosLidos).toBe(history.length * 2);
    // The dashboard's figures are the JSON's but for the run's own (dashboardJson).
    const { grupo, receita, registrosLidos, registrosInvalidos, lag, ...figures } = late;
    expect(figures).toEqual(early);
  }, 90_000);

  it("When approved and refused orders mix, then revenue is exact to the cent and the best-selling item is by quantity over paid orders", async () => {
    const p = await painelJson("figures");
    const paid = history.filter((h) => h.status === "APROVADO");
    const cents = paid.reduce((sum, h) => sum + Math.round(h.valor * 100), 0);
    expect(p.receitaCentavos).toBe(cents); // 19589
    expect(p.receita).toBe(195.89);
    expect(p.pedidosPagos).toBe(paid.length);
    // caneca 4, livro 4, bule 4: a tie, broken by name; sofa and tv were refused
    expect(p.maisVendido).toEqual({ item: "bule", quantidade: 4 });
  }, 60_000);

  it("When the same order gets RECUSADO and then APROVADO, then the first status wins", async () => {
    const id = await criado("relogio", 1, 50);
    await resultado(id, "RECUSADO");
    await resultado(id, "APROVADO");
    const before = await painelJson("first-wins");
    expect(before.pedidosPagos).toBe(6);
    expect(before.pedidosVistos).toBe(history.length + 1);
  }, 60_000);

  it("When a result arrives before its creation event, then it is kept, joined when the creation comes, and counted once", async () => {
    const id = nextId++;
    await resultado(id, "APROVADO");
    const waiting = await painelJson("join");
    expect(waiting.resultadosSemPedido).toBe(1);
    await producer.send({
      topic: nomes.topics.pedidosCriados,
      acks: -1,
      messages: [
        {
          key: String(id),
          value: JSON.stringify(
            aPedidoCriado({ pedidoId: id, cliente: "c", item: "zz", quantidade: 1, valor: 1 }),
          ),
        },
      ],
    });
    const joined = await painelJson("join-late");
    expect(joined.resultadosSemPedido).toBe(0);
    expect(joined.pedidosPagos).toBe(waiting.pedidosPagos + 1);
    expect(joined.receitaCentavos).toBe(waiting.receitaCentavos + 100);
  }, 60_000);

  it("When a record is invalid, then it is counted and reported, never fatal", async () => {
    await producer.send({
      topic: nomes.topics.pedidosCriados,
      acks: -1,
      messages: [{ key: "x", value: "not json" }],
    });
    const run = await cli("invalid", "--until-caught-up");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/INVALID PedidoCriado: not JSON/);
    expect(run.stdout).toMatch(/invalid records {2}1/);
  }, 60_000);

  it("When --until-caught-up is given, then the CLI ends on its own with the final dashboard and lag 0 per partition", async () => {
    const run = await cli("ends", "--until-caught-up");
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(30_000);
    expect(run.stdout).toMatch(/── dashboard/);
    expect(run.stdout).toMatch(/lag per partition/);
    expect(run.stdout).toMatch(/pedidos-criados partition=\d offset=\d+ pedido=\d+/);
    const lagLines = run.stdout.split("\n").filter((l) => /^\s+\S+\s+\d+\s+end/.test(l));
    expect(lagLines).toHaveLength(6);
    for (const line of lagLines) expect(line).toMatch(/lag 0$/);
  }, 60_000);
});

describe("Groups, offsets and replay", () => {
  it("When analytics and auditoria read, then they keep separate offsets, and replay resets one and leaves the other alone", async () => {
    const a = await painelJson("g-analytics");
    const b = await painelJson("g-auditoria");
    expect(a.registrosLidos).toBe(b.registrosLidos);

    await resultado(await criado("extra", 1, 1), "APROVADO");
    // analytics resumes: only the two new records; its view covers only them
    const resumed = await painelJson("g-analytics");
    expect(resumed.registrosLidos).toBe(2);
    // replay: everything again
    const replayed = await painelJson("g-analytics", "--replay");
    expect(replayed.registrosLidos).toBe(a.registrosLidos + 2);
    expect(replayed.pedidosVistos).toBe(a.pedidosVistos + 1);

    // auditoria's committed offsets are where it left them
    const admin = testKafka().admin();
    await admin.connect();
    const offsets = await admin.fetchOffsets({
      groupId: `${prefix}g-auditoria`,
      topics: [nomes.topics.pedidosCriados, nomes.topics.pagamentosResultados],
    });
    await admin.disconnect();
    const committed = offsets
      .flatMap((t) => t.partitions.map((p) => Math.max(0, Number(p.offset))))
      .reduce((s, n) => s + n, 0);
    expect(committed).toBe(b.registrosLidos);
  }, 90_000);

  it("When replay is asked while the group has an active member, then it is refused with a clear message and a non-zero exit, without hanging", async () => {
    const grupo = `${prefix}busy`;
    const stop = new AbortController();
    const follower = runAnalytics({
      brokers: shopConfig().kafka.brokers,
      prefix,
      grupo,
      replay: false,
      untilCaughtUp: false,
      output: new AnalyticsOutput({ json: false, quiet: true }),
      log: capturingLogger("analytics"),
      signal: stop.signal,
    });
    const admin = testKafka().admin();
    await admin.connect();
    await waitFor(
      async () => ((await admin.describeGroups([grupo])).groups[0]?.members.length ?? 0) > 0,
      { what: "the follower to join" },
    );
    await admin.disconnect();

    const run = await cli("busy", "--replay", "--until-caught-up");
    stop.abort();
    await follower;
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/cannot replay: group .*busy has 1 active member/);
    expect(run.ms).toBeLessThan(20_000);
  }, 90_000);
});

describe("Issue 34: the analytics CLI says what is wrong in a sentence", () => {
  it("When Kafka is not running where KAFKA_BROKERS says, then one line names the address and how to start it, exit 1, no stack trace", async () => {
    const r = await cliWith(
      { KAFKA_BROKERS: `127.0.0.1:${await freePort()}`, GRUPO: "ninguem" },
      "--until-caught-up",
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^analytics: Kafka at 127\.0\.0\.1:\d+ cannot be reached .*npm run infra -- kafka start$/m,
    );
    expect(r.stderr + r.stdout).not.toMatch(STACK_FRAME);
  }, 60_000);

  it("When an argument is unknown, then it names it with the usage, exit 2, no stack trace", async () => {
    const r = await cliWith({ GRUPO: "ninguem" }, "--bogus");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bogus/);
    expect(r.stderr + r.stdout).not.toMatch(STACK_FRAME);
  });
});
