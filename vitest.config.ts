import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { inMemoryScratch } from "./infra/scratch.ts";
import { LongestFirst } from "./test/sequencer.ts";

/**
 * Node keeps the code it compiled for each file it loads here, and every process this run
 * starts (vitest's workers, the services, the CLIs) reads it instead of compiling again: a
 * built service took about 0.42 s of CPU to listen, 0.36 s with it (broker-orders, six
 * starts each way), and a run starts some 280. The folder is .work/, outside git.
 */
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL("./.work/compile-cache", import.meta.url));

/**
 * What the tests make for themselves (the databases of the services they start, their own
 * brokers' and servers' data) lives in memory for the run, where the machine has the room:
 * the suite's fsyncs had queued behind each other on the disk (infra/scratch.ts).
 */
if (process.env.SHOP_SCRATCH_DIR === undefined) {
  const scratch = inMemoryScratch();
  if (scratch) process.env.SHOP_SCRATCH_DIR = scratch;
}

/**
 * Six projects (docs/testing.md):
 *  - unit: pure code (contracts, domain, the docs' checks). No broker needed: `npm run test:unit`.
 *  - web: the page's components, in jsdom.
 *  - integration: everything else, against the real Kafka and RabbitMQ that the global
 *    setup brings up through infra/ (never a fake).
 *  - tours: the two code tours' runs, beside integration, each in a fresh worker.
 *  - postgres: the orders API's store and HTTP tests again, on PostgreSQL.
 *  - faults: brokers and services killed and restarted, after everything else.
 */
const unitFiles = ["**/test/unit/**/*.test.ts"];

/** The files that run once per store: SQLite (integration) and PostgreSQL (postgres). */
const POSTGRES_FILES = [
  "orders-api/test/integration/store.test.ts",
  "orders-api/test/integration/pedidos.test.ts",
  "orders-api/test/integration/idempotency.test.ts",
  "orders-api/test/integration/resultados.test.ts",
  "orders-api/test/integration/outbox-refusal.test.ts",
  "orders-api/test/integration/trace.test.ts",
];
/**
 * Several instances on one database: PostgreSQL only. Its fault scenarios run in this
 * project (they need its store), which shares the fault project's four workers.
 */
/**
 * The services the broker projects start run from the bundles test/global-setup.ts builds
 * (harness/process.ts), as production runs them: through tsx, each start compiled the
 * service again, 0.9 s of CPU against 0.45 s built, and a run starts some 250. `npm start`
 * still runs the sources through tsx, and its tests (web/test/integration) prove that path.
 */
const BUILT = { SHOP_CONSTRUIDO: "1" };

/** Before each file of the projects whose files share a worker: nothing read by the one before kept. */
const PER_FILE = "./test/helpers/per-file.ts";

/**
 * The unit and web files first, two at a time (17-18 s, 31 s of CPU): on one worker
 * (vitest's default on two cores) they took the run's first 30 s. In the integration
 * group's pool, among its files, each file took a fresh worker, though they share theirs
 * when run apart (isolate: false): on 2026-11-28 they made the group's last 20-30 s, and on
 * 2026-11-29 a clean clone's run took 339 s and 585 s of CPU against 330 s and 541 s, the
 * time the files spent importing 62 s against 37 s.
 */
const FIRST = { sequence: { groupOrder: 0 }, maxWorkers: 2 };

/**
 * The integration files six at a time on two cores, with the code tours' two in the same
 * workers (a group's projects share one pool, of one size). These files wait more than they
 * compute (decisions' delays, sessions, rebalances, brokers starting). With two at a time
 * the machine's CPU was 55% busy over the project's 442 s, with three 72% over 344 s
 * (2026-11-27); with three on 2026-11-28 the group took 314 s of a 561 s clean-clone
 * .ci/run at 1.4 cores busy, with four 266 s of 506 s at 1.7, every test passing, the
 * failover lab's longest wait 3.1-3.5 s against 3.2-3.5 s with three. Sharing their workers
 * (2026-11-29), four left the cores about 1.1 busy over the group's second half; five took
 * a clean-clone .ci/run from 388 s to 345 s (with the fault group at four), six to 330 s,
 * the cores then 1.8 busy over the group, the failover lab's longest wait 2.6 s. These are
 * the settings of the group's two projects, integration and tours.
 */
const INTEGRATION = {
  sequence: { groupOrder: 1 },
  maxWorkers: 6,
  include: ["**/test/integration/**/*.test.ts"],
  globalSetup: ["./test/global-setup.ts"],
  setupFiles: [PER_FILE],
  env: BUILT,
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

/** The integration files that need a worker of their own (the "tours" project below). */
const OWN_WORKER = [
  "test/integration/infra/code-tour.test.ts",
  "test/integration/infra/code-tour-broker.test.ts",
];

/**
 * The last group: the fault files and the postgres files, in one pool (vitest refuses two
 * sizes in one group), four at a time (see the fault project below for why four).
 */
const FAULT_GROUP = { sequence: { groupOrder: 3 }, maxWorkers: 4 };

const POSTGRES_ONLY = [
  "orders-api/test/integration/instances.test.ts",
  "test/faults/scale-out.test.ts",
];

export default defineConfig({
  test: {
    reporters: ["default", "./test/summary-reporter.ts"],
    // The slow files first, on a clean clone too (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: "unit",
          include: unitFiles,
          ...FIRST,
          exclude: ["**/node_modules/**"],
          // Pure code: its 40 files share their workers and the modules they import. A fresh
          // worker per file, each importing zod, the contracts and the docs' checks again, took
          // 61 s and 79 s of CPU; shared, 27 s and 33 s, all 217 tests passing, in any order
          // (--sequence.shuffle.files), on 2026-11-28.
          isolate: false,
        },
      },
      {
        extends: "./web/vite.config.ts",
        test: {
          name: "web",
          ...FIRST,
          environment: "jsdom",
          include: ["web/test/unit/**/*.test.tsx"],
          // As the unit files: 2.4 s and 3.8 s of CPU shared, 4.3-4.8 s and 7.8-8.1 s with a
          // fresh worker (and jsdom) per file (2026-11-29).
          isolate: false,
        },
      },
      {
        test: {
          name: "integration",
          ...INTEGRATION,
          exclude: ["**/node_modules/**", ...POSTGRES_ONLY, ...OWN_WORKER],
          // Its files share their workers and the modules they import (the shop's
          // sources for the services a file starts in-process, kafkajs, amqplib...): a fresh
          // worker per file imported them 60 times. Each file names its own topics, groups
          // and vhosts, and a service it started stops with it, its gauges too.
          isolate: false,
        },
      },
      {
        // The code tours' runs read V8's call counts (test/helpers/code-tour.ts), which
        // missed two of the broker edition's files in a worker whose earlier files had run
        // the same code (2026-11-29): each tour file has a fresh worker, beside the
        // integration files in the same six.
        test: { name: "tours", ...INTEGRATION, include: OWN_WORKER },
      },
      {
        // The orders API's store suite and HTTP tests again, against PostgreSQL (issue 37):
        // each file makes a database of its own on the machine's server. In the fault
        // project's group, which shares its four workers (vitest runs a group's projects in
        // one pool of the group's maxWorkers): these short files fill the time one worker
        // would otherwise wait for the other's last fault file, about 40 s of the run.
        test: {
          name: "postgres",
          ...FAULT_GROUP,
          include: [...POSTGRES_FILES, ...POSTGRES_ONLY],
          globalSetup: ["./test/global-setup.ts"],
          setupFiles: [PER_FILE],
          env: { ...BUILT, SHOP_TEST_STORE: "postgres" },
          // Sharing their workers, as the integration files do.
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Kills and restarts brokers and services: after everything else. Its files use
        // brokers of their own (a Kafka broker, one to kill, a proxied one and a cluster; a
        // RabbitMQ node, a cluster and vhosts), so they run four at a time, with the
        // postgres project's files (their PostgreSQL faults on a server of their own) in the
        // same four workers. Two at a time, the group took 261 s of a 614 s run, three at a
        // time about 154 s of a 388 s run, four 134-137 s alone (three runs, 2026-11-29),
        // every time to resume under 1.6 s of its 3 s: the scenarios mostly wait (decisions,
        // sessions, outages). Five took 129 s, but a clean-clone run's partition leader row
        // resumed in 3.8 s (0.3-1.4 s in the four runs before at five, 0.1-1.5 s at four):
        // its timings are what it asserts (issue 55). The cluster file (some 120 s of
        // scenarios one after another on one cluster) bounds the group.
        test: {
          name: "faults",
          ...FAULT_GROUP,
          include: ["test/faults/**/*.test.ts"],
          exclude: POSTGRES_ONLY,
          // The second starts this run's table of fault scenarios empty (test/faults/report.ts).
          globalSetup: ["./test/global-setup.ts", "./test/faults/report.ts"],
          // Each service's output, kept per process for a run that failed or hung.
          env: { ...BUILT, SHOP_TEST_LOG_DIR: "test-artifacts/logs" },
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
