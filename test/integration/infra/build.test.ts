import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bundlePath,
  DIST,
  ENTRY_POINTS,
  type EntryPoint,
  NODE_FLAGS,
} from "../../../infra/build.ts";
import { ROOT } from "../../../infra/config.ts";
import {
  analyticsCli,
  http,
  ServiceProcess,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/** The nodes on PATH older than 24, outside node_modules (a machine's own, say). */
function olderNodesOnPath(): { path: string; version: string }[] {
  const found: { path: string; version: string }[] = [];
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const node = join(dir, "node");
    if (dir === "" || dir.includes("node_modules") || !existsSync(node)) continue;
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim().slice(1);
    if (version !== "" && Number(version.split(".")[0]) < 24) found.push({ path: node, version });
  }
  return found;
}

/**
 * npm run build bundles each service to plain JavaScript (dist/), which production runs and
 * the benchmarks measure. These run the bundles with plain node, no tsx, end to end. The
 * bundles are the ones test/global-setup.ts built for this run with the same buildBundles
 * (every broker test runs them): building again here would rewrite files that other
 * tests' services are loading at that moment.
 */
describe("npm run build", () => {
  const running: ServiceProcess[] = [];
  beforeAll(() => {
    expect(process.env.SHOP_CONSTRUIDO).toBe("1");
    for (const name of Object.keys(ENTRY_POINTS) as EntryPoint[])
      expect(existsSync(bundlePath(name)), bundlePath(name)).toBe(true);
  });
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
  });

  it("When the bundles run with plain node, then an order is created, decided by a built payments instance and counted by built analytics", async () => {
    const prefix = uniquePrefix("built");
    const env = serviceEnv(prefix);
    const api = await ServiceProcess.start("orders-api", "orders-api", {
      ...env,
      DB_PATH: tempDb("built"),
    });
    running.push(api);
    const payments = await ServiceProcess.start("payments", "payments", {
      ...env,
      INSTANCIA: "caixa-built",
      TEMPO_DECISAO_MS: "0",
    });
    running.push(payments);
    for (const p of [api, payments]) {
      const cmdline = readFileSync(`/proc/${p.child.pid}/cmdline`, "utf8").split("\0");
      expect(cmdline.some((a) => a.startsWith(DIST))).toBe(true);
      expect(cmdline).not.toContain("tsx");
      expect(cmdline).toEqual(expect.arrayContaining(NODE_FLAGS));
    }

    const created = await http<{ id: number }>("POST", `${api.url()}/pedidos`, {
      cliente: "ana",
      item: "caneca",
      quantidade: 2,
      precoUnitario: 12.5,
    });
    expect(created.status).toBe(201);
    const final = await waitFor(async () => {
      const r = await http<{ status: string; processadoPor: string }>(
        "GET",
        `${api.url()}/pedidos/${created.body.id}`,
      );
      return r.body.status === "PAGO" ? r.body : undefined;
    });
    expect(final.processadoPor).toBe("caixa-built");

    const cli = analyticsCli(env.KAFKA_BROKERS as string, prefix, `built-${Date.now()}`);
    expect(cli.args.some((a) => a.startsWith(DIST))).toBe(true);
    const run = spawnSync(process.execPath, cli.args, {
      env: cli.env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      pedidosVistos: 1,
      pedidosPagos: 1,
      receitaCentavos: 2500,
    });
  }, 120_000);

  it("When a built program starts on a Node older than 24, then it stops at once with one sentence saying what to run instead", () => {
    // The Node running this test is 24; a preload makes it report an older version, so the
    // guard is proven on any machine. A real older node on PATH (this machine's own) is
    // tried too where there is one.
    const pretend = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.19.0"})`;
    const runs = [
      { node: process.execPath, args: ["--import", pretend], version: "20.19.0" },
      ...olderNodesOnPath().map((o) => ({ node: o.path, args: [], version: o.version })),
    ];
    for (const { node, args, version } of runs) {
      for (const program of ["orders-api", "analytics"]) {
        const r = spawnSync(node, [...args, join(DIST, `${program}.mjs`)], {
          cwd: ROOT,
          encoding: "utf8",
          timeout: 10_000,
        });
        expect(r.status, `${node} ${program}: ${r.stderr}`).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toBe(
          `dist/${program}.mjs needs Node 24 and this is Node ${version}: run it through npm (npm start, npm run ...), which uses the Node 24 that npm ci installed, or with node_modules/.bin/node instead of node.\n`,
        );
      }
    }
  });

  it("When a package is imported but unused, then its bundle leaves it out, no source file imports a package for its side effects alone, and only native code stays outside", () => {
    // The build marks every package the shop's code imports free of side effects, so that
    // a bundle does not load what it never calls: that is only safe while no file relies
    // on an import for its side effects (import "pkg").
    const sources = spawnSync(
      "git",
      ["grep", "-lE", `^import ["'][^./]`, "--", "*.ts", "*.tsx", "*.mjs"],
      { encoding: "utf8" },
    ).stdout.trim();
    expect(sources).toBe("");
    const bundle = (name: string) => readFileSync(join(DIST, `${name}.mjs`), "utf8");
    // esbuild heads each bundled file with its path: "// node_modules/express/index.js".
    const bundled = (text: string) =>
      new Set(
        [...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1] ?? ""),
      );
    const imported = (text: string) =>
      new Set(
        [...text.matchAll(/^(?:import .*|\}) from "([^."][^"]*)";$/gm)].map((m) => m[1] ?? ""),
      );
    const analytics = bundle("analytics");
    // @shop/service's index also exports the HTTP shell; the CLI never calls it.
    for (const unused of ["express", "helmet", "cors", "pino-pretty"])
      expect(bundled(analytics).has(unused), unused).toBe(false);
    expect(bundled(analytics).has("kafkajs")).toBe(true);
    const orders = bundle("orders-api");
    expect(bundled(orders).has("express")).toBe(true);
    // Imported at run time, from node_modules: Node's own modules and native code only.
    const outside = [...imported(orders)].filter((m) => !isBuiltin(m));
    expect(outside).toEqual(["better-sqlite3"]);
  });
});
