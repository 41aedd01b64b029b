import { randomBytes } from "node:crypto";
import { join } from "node:path";
import autocannon from "autocannon";
import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { ROOT } from "../infra/config.ts";
import { ORDER } from "./intake.ts";
import {
  FEATURE_MATCHED_GOAL,
  LEAN_TWIN_GOAL,
  type Pair,
  type PairedRow,
  PROMISES,
  pairedRow,
  priceList,
  priceTable,
  promisesOfStep,
} from "./prices.ts";
import { barePipelineKafka, deleteTopics, measureCpu, median } from "./stats.ts";

/**
 * A load of POST /pedidos: `connections` at most, for `seconds`; at `rate` requests a second
 * on schedule (open loop) when given, as fast as answers come otherwise. Every other request
 * carries a fresh Idempotency-Key (issue 57: the shop is measured on the load it promises
 * to serve, keyed requests included).
 */
async function keyedLoad(url: string, seconds: number, connections: number, rate?: number) {
  const stamp = randomBytes(4).toString("hex");
  let n = 0;
  const result = await autocannon({
    url: `${url}/pedidos`,
    connections,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ORDER,
        setupRequest: (req: autocannon.Request) => {
          n++;
          return n % 2 === 0
            ? { ...req, headers: { ...req.headers, "idempotency-key": `${stamp}-${n}` } }
            : req;
        },
      },
    ],
  });
  return { ok: result["2xx"], errors: result.non2xx + result.errors, rps: result["2xx"] / seconds };
}

/** One program under the load: its CPU per answered request (ms). */
async function cpuPerRequest(
  p: ServiceProcess,
  seconds: number,
  connections: number,
  rate: number,
) {
  const cpu = measureCpu({ p: [p.child.pid as number] });
  const r = await keyedLoad(p.url(), seconds, connections, rate);
  if (r.errors > 0 || r.ok === 0)
    throw new Error(`${p.name}: ${r.errors} of ${r.ok + r.errors} requests failed under the load`);
  return cpu.stop(r.ok).total;
}

/** `pairs` pairs of `a` and `b` under the same load, in turn (a, b, b, a, a, b...: neither always first). */
async function measurePairs(
  a: ServiceProcess,
  b: ServiceProcess,
  opts: { pairs: number; seconds: number; connections: number; rate: number },
): Promise<Pair[]> {
  const pairs: Pair[] = [];
  for (let i = 0; i < opts.pairs; i++) {
    const run = (p: ServiceProcess) => cpuPerRequest(p, opts.seconds, opts.connections, opts.rate);
    if (i % 2 === 0) {
      const before = await run(a);
      pairs.push({ before, after: await run(b) });
    } else {
      const after = await run(b);
      pairs.push({ before: await run(a), after });
    }
  }
  return pairs;
}

export interface PriceListResult {
  /** The shop's closed-loop rate (req/s) and the fixed rate every pair was measured at. */
  ceilingRps: number;
  rate: number;
  leanMs: number;
  table: string;
  prices: ReturnType<typeof priceList>["prices"];
  /** The orders API ÷ the feature-matched twin, and ÷ the lean twin, pair by pair. */
  headline: PairedRow;
  againstLean: PairedRow;
}

/** The unmeasured load each twin gets before its first pair (seconds, at least). */
const WARM_UP_S = 5;

/**
 * `npm run bench -- --only=prices` (issue 57): the shop's ceiling (closed loop, half the
 * requests keyed), then every step of the price list and the shop against the
 * feature-matched twin, each in alternating pairs at 70 % of that ceiling, open loop, so
 * that both sides of a pair batch alike.
 */
export async function benchPrices(opts: {
  brokers: string;
  pairs: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<PriceListResult> {
  const { brokers, log } = opts;
  const topics = await barePipelineKafka(brokers, "prices");
  const prefix = uniquePrefix("prices-shop");
  const started: ServiceProcess[] = [];
  // A twin is started when its step comes, and loaded once unmeasured before its pairs: fresh,
  // its code not yet compiled, it read 50-171 % dearer than warm in its first pair, every
  // step's (the full run of 2026-12-01 at 23:55), which made each promise look pricier.
  const twin = async (k: number, rate: number) => {
    const p = await ServiceProcess.startScript(
      `twin ${k}`,
      join(ROOT, "bench/twin-orders.ts"),
      topics.env({ DB_PATH: tempDb(`twin-${k}`), PROMISES: promisesOfStep(k).join(",") }),
    );
    started.push(p);
    await keyedLoad(p.url(), Math.max(WARM_UP_S, opts.seconds), opts.connections, rate);
    return p;
  };
  try {
    const shop = await ServiceProcess.start("orders-api", "orders-api", {
      ...serviceEnv(prefix, { DB_PATH: tempDb("prices-shop") }),
      KAFKA_BROKERS: brokers,
    });
    started.push(shop);
    const ceiling = await keyedLoad(shop.url(), opts.seconds, opts.connections);
    const rate = Math.max(50, Math.round(ceiling.rps * 0.7));
    log(
      `prices: the orders API's ceiling ${Math.round(ceiling.rps)} req/s; every pair at ${rate} req/s`,
    );
    const load = { pairs: opts.pairs, seconds: opts.seconds, connections: opts.connections, rate };
    const steps: Pair[][] = [];
    let before = await twin(0, rate);
    const lean = before;
    for (let k = 1; k <= PROMISES.length; k++) {
      const after = await twin(k, rate);
      log(`prices: + ${PROMISES[k - 1]}, ${opts.pairs} pairs of ${opts.seconds} s...`);
      steps.push(await measurePairs(before, after, load));
      if (before !== lean) await before.stop();
      before = after;
    }
    log(`prices: the orders API against the feature-matched twin, ${opts.pairs} pairs...`);
    const headline = pairedRow(await measurePairs(before, shop, load), FEATURE_MATCHED_GOAL);
    log(`prices: the orders API against the lean twin, ${opts.pairs} pairs...`);
    const againstLean = pairedRow(await measurePairs(lean, shop, load), LEAN_TWIN_GOAL);
    const list = priceList(steps);
    return {
      ceilingRps: ceiling.rps,
      rate,
      leanMs: list.leanMs,
      table: priceTable(list),
      prices: list.prices,
      headline,
      againstLean,
    };
  } finally {
    for (const p of started.reverse()) await p.stop();
    await topics.dispose();
    await deleteTopics(brokers, prefix);
  }
}

/** A change's before/after: the CPU per request of each side, pair by pair, and their ratio. */
export interface CutResult {
  rate: number;
  pairs: Pair[];
  /** The median of the pairs' after ÷ before. */
  ratio: number;
  table: string;
}

/**
 * `npm run bench -- --only=cut --base=<checkout>` (issue 57: each cut measured before and
 * after in alternating pairs, and kept only where it pays): the orders API built in another
 * checkout of the shop (the base, before the change: `npm ci && npm run build` there) against
 * this checkout's, under the price list's load, open loop at 70 % of the base's ceiling.
 */
export async function benchCut(opts: {
  brokers: string;
  base: string;
  pairs: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<CutResult> {
  const { brokers, log } = opts;
  const baseBundle = join(opts.base, "dist/orders-api.mjs");
  // Both sides on the same topics (the shop's own, under one prefix), each its own database.
  const prefix = uniquePrefix("cut");
  const started: ServiceProcess[] = [];
  const start = async (side: "before" | "after") => {
    const env = {
      ...serviceEnv(prefix, { DB_PATH: tempDb(`cut-${side}`) }),
      KAFKA_BROKERS: brokers,
    };
    const p =
      side === "before"
        ? await ServiceProcess.startScript("orders-api (base)", baseBundle, env, opts.base)
        : await ServiceProcess.start("orders-api", "orders-api", env);
    started.push(p);
    return p;
  };
  try {
    const before = await start("before");
    const ceiling = await keyedLoad(before.url(), opts.seconds, opts.connections);
    const rate = Math.max(50, Math.round(ceiling.rps * 0.7));
    const after = await start("after");
    // Both warm before the first pair: a fresh process reads dear (see WARM_UP_S).
    await keyedLoad(after.url(), Math.max(WARM_UP_S, opts.seconds), opts.connections, rate);
    log(
      `cut: the base's ceiling ${Math.round(ceiling.rps)} req/s; ${opts.pairs} pairs at ${rate} req/s`,
    );
    const load = { pairs: opts.pairs, seconds: opts.seconds, connections: opts.connections, rate };
    const pairs = await measurePairs(before, after, load);
    const ratios = pairs.map((p) => p.after / p.before);
    const ratio = median(ratios);
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    const table = [
      `| pair | before (${opts.base}) | after (this checkout) | after ÷ before |`,
      "|---|---|---|---|",
      ...pairs.map(
        (p, i) =>
          `| ${i + 1} | ${ms(p.before)} | ${ms(p.after)} | ${(p.after / p.before).toFixed(3)} |`,
      ),
      `| median | ${ms(median(pairs.map((p) => p.before)))} | ${ms(median(pairs.map((p) => p.after)))} | **${ratio.toFixed(3)}** |`,
    ].join("\n");
    return { rate, pairs, ratio, table };
  } finally {
    for (const p of started.reverse()) await p.stop();
    await deleteTopics(brokers, prefix);
  }
}
