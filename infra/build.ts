import { join } from "node:path";
import { NODE_MAJOR } from "@shop/service";
import { build, type Plugin } from "esbuild";
import { ROOT } from "./config.ts";

/**
 * npm run build: each service as one plain-JavaScript file under dist/ (git-ignored), for
 * production runs and the benchmarks. Run from source, every process also carries tsx's
 * loader (a second V8 isolate on its own thread: the orders API at rest measured 119 MB of
 * RSS through tsx, 89 MB built).
 * The workspace's own packages (@shop/*, TypeScript) and what they use from node_modules
 * are bundled in, but for native code (better-sqlite3 loads as usual: see NATIVE below).
 * Each bundle's first
 * import is dist/node-version.mjs: ES modules evaluate in import order, so on a Node older
 * than the shop's it stops before any package loads (libs/service/src/node-version.ts).
 */
export const ENTRY_POINTS = {
  "orders-api": "orders-api/src/main.ts",
  payments: "payments/src/main.ts",
  analytics: "analytics/src/main.ts",
  "broker-orders": "broker/orders/src/main.ts",
  "broker-payments": "broker/payments/src/main.ts",
  dlq: "dlq/src/main.ts",
} as const;

export type EntryPoint = keyof typeof ENTRY_POINTS;

/**
 * V8 settings the built services run with. By default V8 lets a busy heap grow far past
 * what it holds (measured under 64 concurrent POSTs: 30 MB live in a 100 MB heap, 190 MB
 * RSS). A 20 % growth step and 4 MB semi-spaces keep the orders API near 120 MB under that
 * load for about a tenth more CPU per request (npm run bench: memory rows). 4 MB rather
 * than 8: the same CPU per request (0.25 against 0.24 ms) for 10 MB less (121-123 MB
 * against 133-134); 2 MB saved 3 MB more for a fifth more CPU.
 */
export const NODE_FLAGS = ["--max-semi-space-size=4", "--heap-growing-percent=20"];

/**
 * The analytics CLI's own, in place of the services': a replay is a batch job whose goals
 * are a rate (≥ 0.9 of a bare kafkajs reader) and 300 MB (issue 49; 250 MB in issue 36),
 * and under the services' settings its fetching thread spent a third of its time
 * collecting garbage. npm run bench -- --only=replay (1,000,000 records, median of 3 each,
 * analytics ÷ the bare kafkajs consumer, peak RSS): the services' flags 0.62-0.66 at
 * 190 MB; 16 MB semi-spaces alone 0.71 at 212 MB; a 100 % growth step alone 0.79 at
 * 209 MB; both 0.71-0.92 at 215-228 MB; with 24 MB semi-spaces 0.99 at 251 MB, which the
 * 300 MB of issue 49 allows; V8's defaults 0.88 at 364 MB.
 */
export const ANALYTICS_NODE_FLAGS = ["--max-semi-space-size=24", "--heap-growing-percent=100"];

/** The V8 settings a built program runs with. */
export const nodeFlagsOf = (name: EntryPoint) =>
  name === "analytics" ? ANALYTICS_NODE_FLAGS : NODE_FLAGS;

export const DIST = join(ROOT, "dist");
export const bundlePath = (name: EntryPoint) => join(DIST, `${name}.mjs`);

/** The entry point of a service folder's src/main.ts ("broker/orders" -> broker-orders). */
export function entryOf(serviceDir: string): EntryPoint {
  const name = (Object.keys(ENTRY_POINTS) as EntryPoint[]).find(
    (n) => ENTRY_POINTS[n] === `${serviceDir}/src/main.ts`,
  );
  if (!name) throw new Error(`build: no entry point for ${serviceDir}/src/main.ts in ENTRY_POINTS`);
  return name;
}

/**
 * What a bundle keeps as an import: the packages with native code (better-sqlite3; pg's
 * optional pg-native, which the shop never installs) and what the code loads lazily by
 * name (pino-pretty, OpenTelemetry's exporter: createRequire, not import). Everything else
 * is bundled in, node_modules too: a start read some 400 files of node_modules, each
 * resolved, read and compiled on its own; one file, the same code, took a third less CPU
 * (payments 0.70 s → 0.47 s, the orders API 0.70-0.85 → 0.53-0.55 s until it listens,
 * five starts each, 2026-11-28), and the tests start some 250 services a run.
 */
const NATIVE = new Set(["better-sqlite3", "pg-native"]);
/** Marks esbuild's own resolution of a package the plugin asked for, so it is not asked again. */
const RESOLVING = Symbol("resolving");

/**
 * A package the shop's own code imports but never uses is left out (sideEffects: false):
 * @shop/service's index brings Express, helmet and cors into every bundle, and the CLIs
 * loaded them at each start for nothing (analytics: 0.1 s of its start-up, on the main
 * thread and again on its decoding thread). No source file imports a package for its side
 * effects alone (test/integration/infra/build.test.ts checks that). Inside node_modules,
 * each package's own sideEffects field decides, as esbuild reads it.
 */
const dependencies: Plugin = {
  name: "dependencies",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith("@shop/") || args.path.startsWith("node:")) return undefined;
      if (NATIVE.has(args.path)) return { path: args.path, external: true };
      if (args.pluginData === RESOLVING || args.importer.includes("/node_modules/")) return;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: RESOLVING,
      });
      if (found.errors.length > 0) return { errors: found.errors };
      return { path: found.path, external: found.external, sideEffects: false };
    });
  },
};
/**
 * Packages written for require() still call it, for Node's own modules, once bundled into
 * an ES module: the bundle defines it, as Node does for them.
 */
const REQUIRE = `import { createRequire as shopCreateRequire } from "node:module";
const require = shopCreateRequire(import.meta.url);`;

const GUARD = "node-version.mjs";

export async function buildBundles(): Promise<string[]> {
  const guard = await build({
    entryPoints: [join(ROOT, "libs/service/src/node-version.ts")],
    outfile: join(DIST, GUARD),
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${NODE_MAJOR}`,
    logLevel: "warning",
  });
  const result = await build({
    entryPoints: Object.fromEntries(
      Object.entries(ENTRY_POINTS).map(([n, f]) => [n, join(ROOT, f)]),
    ),
    outdir: DIST,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${NODE_MAJOR}`,
    sourcemap: "linked",
    banner: { js: `import "./${GUARD}";\n${REQUIRE}` },
    plugins: [dependencies],
    logLevel: "warning",
  });
  if (guard.errors.length + result.errors.length > 0)
    throw new Error("build: esbuild reported errors");
  return Object.keys(ENTRY_POINTS).map((n) => bundlePath(n as EntryPoint));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  const files = await buildBundles();
  console.log(`build: ${files.length} files in dist/ in ${Date.now() - started} ms`);
  for (const f of files) console.log(`  ${f.slice(ROOT.length + 1)}`);
}
