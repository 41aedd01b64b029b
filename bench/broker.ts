import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@shop/service";
import autocannon from "autocannon";
import { brokerEnv, shopConfig, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { createVhost, type ShopVhost } from "../harness/vhost.ts";
import { ROOT } from "../infra/config.ts";
import { amqpUrlAdmin } from "../infra/rabbitmq/rabbitmq.ts";
import { PeakMemory, type Row, rssMb } from "./intake.ts";
import { latenciesFromDb, measureCpu, medianOf, pidsOf, RABBITMQ } from "./stats.ts";

const PERFTEST_POM = join(ROOT, "bench/perftest/pom.xml");
const PERFTEST_LIB = join(ROOT, "bench/perftest/.work/lib");

/** RabbitMQ's PerfTest jars from Maven Central (once; Maven's cache keeps them). */
function ensurePerfTest(log: (l: string) => void): void {
  if (existsSync(join(PERFTEST_LIB, "perf-test-2.22.1.jar"))) return;
  log("broker: fetching RabbitMQ PerfTest from Maven Central (first run only)...");
  const r = spawnSync(
    "mvn",
    [
      "-q",
      "-f",
      PERFTEST_POM,
      "dependency:copy-dependencies",
      "-DincludeScope=runtime",
      `-DoutputDirectory=${PERFTEST_LIB}`,
    ],
    { encoding: "utf8", timeout: 600_000 },
  );
  if (r.status !== 0) throw new Error(`mvn could not fetch PerfTest:\n${r.stdout}\n${r.stderr}`);
}

/**
 * PerfTest publishing persistent messages of `size` bytes to a quorum queue with
 * publisher confirms: `producers` producers, each waiting for its confirm before the next
 * message, as each of our HTTP connections waits for its request's confirm.
 */
function perfTest(url: string, producers: number, size: number, seconds: number) {
  const r = spawnSync(
    "java",
    [
      "-Xmx512m",
      "-cp",
      `${PERFTEST_LIB}/*`,
      "com.rabbitmq.perf.PerfTest",
      "--uri",
      url,
      "--producers",
      String(producers),
      "--consumers",
      "0",
      "--confirm",
      "1",
      "--size",
      String(size),
      "--time",
      String(seconds),
      "--flag",
      "persistent",
      "--queue",
      "perftest-baseline",
      "--quorum-queue",
    ],
    { encoding: "utf8", timeout: (seconds + 120) * 1000 },
  );
  const m = r.stdout.match(/sending rate avg: (\d+) msg\/s/);
  if (!m) throw new Error(`PerfTest gave no summary:\n${r.stdout}\n${r.stderr}`);
  const p99 = r.stdout.match(/confirm latency min\/median\/75th\/95th\/99th ([\d/.]+) (µs|ms)/);
  const confirmP99Ms = p99
    ? Number((p99[1] as string).split("/")[4]) / (p99[2] === "µs" ? 1000 : 1)
    : Number.NaN;
  return { rps: Number(m[1]), confirmP99Ms };
}

/** created -> concluded latencies (ms) of the payment requests, and the span of them all. */
const concluded = (dbPath: string) =>
  latenciesFromDb(
    dbPath,
    "SELECT criada_em AS c, concluida_em AS d FROM solicitacoes WHERE concluida_em IS NOT NULL",
  );

/** `requests` orders of one item each, created on the orders service at `url`: their ids. */
async function prepareOrders(url: string, requests: number): Promise<string[]> {
  const ids: string[] = [];
  await autocannon({
    url,
    connections: 16,
    amount: requests,
    requests: [
      {
        method: "POST",
        path: "/pedidos",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          clienteId: "bench",
          itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
        }),
        onResponse: (status: number, body: string) => {
          if (status === 201) ids.push((JSON.parse(body) as { id: string }).id);
        },
      },
    ],
  });
  if (ids.length !== requests)
    throw new Error(`only ${ids.length} of ${requests} orders were created`);
  return ids;
}

/** One payment request per order, each with a new key, `connections` at a time. */
function paymentRequests(url: string, ids: string[], connections: number) {
  let next = 0;
  return autocannon({
    url,
    connections,
    amount: ids.length,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (req) => ({
          ...req,
          path: `/pedidos/${ids[next++ % ids.length]}/pagamentos`,
          body: JSON.stringify({ solicitacaoId: randomUUID(), cenario: "APROVAR" }),
        }),
      },
    ],
  });
}

/**
 * The orders and payments programs' memory while a run works (issue 49): the sum of their
 * peak RSS, and of their peak private memory, sampled every half second until `stop`.
 */
function servicesMemory(programs: ServiceProcess[]) {
  const memory = programs.map((p) => new PeakMemory(p.child.pid as number));
  const sampler = setInterval(() => {
    for (const m of memory) m.sample();
  }, 500);
  return {
    stop() {
      clearInterval(sampler);
      const sum = (f: (m: PeakMemory) => number) => memory.reduce((n, m) => n + f(m), 0);
      return { peakRssMb: sum((m) => m.rssMb), peakPrivateMb: sum((m) => m.privateMb) };
    },
  };
}

/**
 * The baseline: bare-broker.ts (amqplib, quorum queues, confirms, mandatory, manual acks,
 * prefetch 1 on 16 consumers a queue, SQLite FULL on both sides) under the same requests,
 * until each is concluded. CPU per request of both roles together, and of RabbitMQ.
 */
async function bareBroker(
  vhost: ShopVhost,
  requests: number,
  connections: number,
  log: (l: string) => void,
) {
  const prefix = uniquePrefix("bare-broker");
  const ordersDb = tempDb("bare-broker-orders");
  const env = (extra: Record<string, string>) => ({
    PREFIX: prefix,
    AMQP_URL: amqpUrlAdmin(shopConfig().rabbit, vhost.vhost),
    ...extra,
  });
  const script = join(ROOT, "bench/bare-broker.ts");
  const orders = await ServiceProcess.startScript(
    "bare broker orders",
    script,
    env({ ROLE: "orders", DB_PATH: ordersDb }),
  );
  const running = [orders];
  try {
    running.push(
      await ServiceProcess.startScript(
        "bare broker payments",
        script,
        env({ ROLE: "payments", DB_PATH: tempDb("bare-broker-payments") }),
      ),
    );
    const ids = await prepareOrders(orders.url(), requests);
    log(
      `broker: the bare amqplib flow, ${requests} payment requests, ${connections} connections...`,
    );
    const cpu = measureCpu({
      services: running.map((p) => p.child.pid as number),
      RabbitMQ: pidsOf(RABBITMQ),
    });
    const memory = servicesMemory(running);
    const result = await paymentRequests(orders.url(), ids, connections);
    const accepted = result["2xx"];
    await waitFor(() => concluded(ordersDb).n >= accepted, {
      timeoutMs: 300_000,
      intervalMs: 500,
      what: `${accepted} bare payment requests concluded`,
    });
    const spent = cpu.stop(accepted);
    return {
      servicesCpuMs: spent.perUnit.services ?? 0,
      rabbitCpuMs: spent.perUnit.RabbitMQ ?? 0,
      p99: result.latency.p99,
      ...memory.stop(),
    };
  } finally {
    await Promise.all(running.map((p) => p.stop()));
  }
}

/** Benchmark 4: payment requests on the broker edition, each confirmed by RabbitMQ. */
export async function benchBroker(opts: {
  requests: number;
  connections: number;
  bareRps: number;
  /** Runs, each beside a run of the bare amqplib flow; 1 when left out. */
  trials?: number;
  log: (l: string) => void;
}): Promise<Row[]> {
  const { requests, connections, log } = opts;
  ensurePerfTest(log);
  const vhost = await createVhost("bench");
  const running: ServiceProcess[] = [];
  try {
    const ordersEnv = brokerEnv(vhost, "bench-orders");
    const ordersDb = ordersEnv.DB_PATH as string;
    const orders = await ServiceProcess.start("broker-orders", "broker/orders", ordersEnv);
    running.push(orders);
    const payments = await ServiceProcess.start(
      "broker-payments",
      "broker/payments",
      brokerEnv(vhost, "bench-payments"),
    );
    running.push(payments);

    const restMb = rssMb(orders.child.pid as number);
    let peakMb = restMb;
    let paymentsPeakMb = rssMb(payments.child.pid as number);
    const timer = setInterval(() => {
      peakMb = Math.max(peakMb, rssMb(orders.child.pid as number));
      paymentsPeakMb = Math.max(paymentsPeakMb, rssMb(payments.child.pid as number));
    }, 500);
    const trials = opts.trials ?? 1;
    const runs: Record<string, number>[] = [];
    let shown: Awaited<ReturnType<typeof paymentRun>> | null = null;
    let concludedBefore = 0;
    /** One run: new orders, a payment request each, until every one is concluded. */
    const paymentRun = async (of: string) => {
      log(`broker: preparing ${requests} orders${of}...`);
      const ids = await prepareOrders(orders.url(), requests);
      log(`broker: ${requests} payment requests, ${connections} connections, new keys${of}...`);
      const cpu = measureCpu({
        orders: [orders.child.pid as number],
        payments: [payments.child.pid as number],
        RabbitMQ: pidsOf(RABBITMQ),
      });
      const memory = servicesMemory([orders, payments]);
      const started = Date.now();
      const result = await paymentRequests(orders.url(), ids, connections);
      const seconds = (Date.now() - started) / 1000;
      const accepted = result["2xx"];
      const whileAccepting = cpu.stop(accepted).text;
      await waitFor(() => concluded(ordersDb).n >= concludedBefore + accepted, {
        timeoutMs: 300_000,
        intervalMs: 500,
        what: `${accepted} payment requests concluded`,
      });
      concludedBefore += accepted;
      // The cost of a request is all it causes, to PAGO: read once every request concluded.
      return {
        result,
        seconds,
        accepted,
        whileAccepting,
        spent: cpu.stop(accepted),
        ...memory.stop(),
      };
    };
    // Each run beside its baseline (the bare amqplib flow), alternately.
    for (let t = 1; t <= trials; t++) {
      const run = await paymentRun(trials > 1 ? ` (run ${t}/${trials})` : "");
      const bare = await bareBroker(vhost, requests, connections, log);
      runs.push({
        servicesCpuMs: (run.spent.perUnit.orders ?? 0) + (run.spent.perUnit.payments ?? 0),
        rabbitCpuMs: run.spent.perUnit.RabbitMQ ?? 0,
        bareServicesCpuMs: bare.servicesCpuMs,
        bareRabbitCpuMs: bare.rabbitCpuMs,
        servicesPeakRssMb: run.peakRssMb,
        servicesPeakPrivateMb: run.peakPrivateMb,
        bareServicesPeakRssMb: bare.peakRssMb,
        bareServicesPeakPrivateMb: bare.peakPrivateMb,
      });
      if (t === Math.ceil(trials / 2)) shown = run;
    }
    clearInterval(timer);
    if (!shown) throw new Error("the broker benchmark ran no run");
    const { result, seconds, accepted, whileAccepting, spent } = shown;
    const rps = accepted / seconds;
    const e2e = concluded(ordersDb);
    const size = Buffer.byteLength(
      JSON.stringify({
        versao: 1,
        solicitacaoId: randomUUID(),
        pedidoId: randomUUID(),
        valor: 37.8,
        cenario: "APROVAR",
      }),
    );
    const seconds4Perf = Math.max(5, Math.round(seconds));
    log(
      `broker: PerfTest, ${connections} producers, ${size} bytes, confirms, ${seconds4Perf} s...`,
    );
    const perfCpu = measureCpu({ RabbitMQ: pidsOf(RABBITMQ) });
    const perf = perfTest(
      amqpUrlAdmin(shopConfig().rabbit, vhost.vhost),
      connections,
      size,
      seconds4Perf,
    );
    // PerfTest's average rate over its run: the messages RabbitMQ took and confirmed.
    const rabbitPerMessage = perfCpu.stop(perf.rps * seconds4Perf).total;

    const errors = result.non2xx + result.errors;
    return [
      {
        id: "broker",
        benchmark: "broker: POST /pedidos/{id}/pagamentos",
        measured: `${Math.round(rps)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${errors}; ${whileAccepting}; to PAGO ${spent.text}`,
        baseline: `bare Express ${Math.round(opts.bareRps)} req/s`,
        value: rps,
        baselineValue: opts.bareRps,
        ratio: rps / opts.bareRps,
        unit: "req/s",
        extra: {
          p50: result.latency.p50,
          p99: result.latency.p99,
          errors,
          servicesCpuMs: medianOf(runs, "servicesCpuMs"),
          rabbitCpuMs: medianOf(runs, "rabbitCpuMs"),
          rabbitPerfTestCpuMs: rabbitPerMessage,
          bareServicesCpuMs: medianOf(runs, "bareServicesCpuMs"),
          bareRabbitCpuMs: medianOf(runs, "bareRabbitCpuMs"),
        },
        trials: runs,
      },
      {
        benchmark: "broker: requests vs PerfTest with confirms",
        measured: `${Math.round(rps)} req/s`,
        baseline: `PerfTest ${perf.rps} msg/s (confirm p99 ${perf.confirmP99Ms.toFixed(1)} ms)`,
        value: rps,
        baselineValue: perf.rps,
        ratio: rps / perf.rps,
        unit: "req/s",
      },
      {
        benchmark: "broker: end to end to PAGO",
        measured: `${Math.round(e2e.n / (e2e.spanMs / 1000))} payments/s, p50 ${e2e.p50} ms, p99 ${e2e.p99} ms`,
        baseline: `requests accepted ${Math.round(rps)} req/s`,
        value: e2e.n / (e2e.spanMs / 1000),
        baselineValue: rps,
        ratio: e2e.n / (e2e.spanMs / 1000) / rps,
        unit: "payments/s",
        extra: { p50: e2e.p50, p99: e2e.p99 },
      },
      {
        id: "memory-broker-orders",
        benchmark: "memory: broker orders RSS under load",
        measured: `${peakMb} MB (at rest ${restMb} MB)`,
        baseline: "goal 100 MB",
        value: peakMb,
        baselineValue: 100,
        ratio: peakMb / 100,
        unit: "MB",
      },
      {
        id: "memory-broker-payments",
        benchmark: "memory: broker payments RSS under load",
        measured: `${paymentsPeakMb} MB`,
        baseline: "goal 100 MB",
        value: paymentsPeakMb,
        baselineValue: 100,
        ratio: paymentsPeakMb / 100,
        unit: "MB",
      },
    ];
  } finally {
    await Promise.all(running.map((p) => p.stop()));
    await vhost.dispose();
  }
}
