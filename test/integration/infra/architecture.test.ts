import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../infra/config.ts";

/**
 * The linter's rule (biome.json) that keeps domain code free of frameworks and clients,
 * run on a probe file in a scratch copy of the project's layout.
 */
function lintAs(path: string, source: string) {
  const dir = mkdtempSync(join(tmpdir(), "lint-probe-"));
  // The project's rules, without its git integration (the scratch folder is no repository).
  const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8")) as { vcs?: unknown };
  delete config.vcs;
  writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), source);
  return spawnSync(join(ROOT, "node_modules/.bin/biome"), ["lint", path], {
    cwd: dir,
    encoding: "utf8",
  });
}

describe("Architecture: the domain and the use cases import no framework or broker client; only messaging/ knows the broker", () => {
  for (const lib of ["express", "kafkajs", "amqplib", "better-sqlite3"]) {
    it(`When domain code imports ${lib}, then the linter fails`, () => {
      const result = lintAs(
        "orders-api/src/domain/probe.ts",
        `import x from "${lib}";\nexport const y = x;\n`,
      );
      expect(result.status).not.toBe(0);
      expect(result.stdout + result.stderr).toMatch(/noRestrictedImports/);
    });
  }

  for (const [path, lib] of [
    ["orders-api/src/pedidos.ts", "express"],
    ["broker/orders/src/pedidos.ts", "@shop/amqp"],
    ["payments/src/pagamentos.ts", "@shop/kafka"],
    ["broker/payments/src/pagamentos.ts", "better-sqlite3"],
  ] as const) {
    it(`When the use cases (${path}) import ${lib}, then the linter fails: use cases are transport-free`, () => {
      const result = lintAs(path, `import x from "${lib}";\nexport const y = x;\n`);
      expect(result.status).not.toBe(0);
      expect(result.stdout + result.stderr).toMatch(/noRestrictedImports/);
    });
  }

  for (const path of ["orders-api/src/http/probe.ts", "broker/payments/src/server.ts"]) {
    it(`When ${path}, outside messaging/, imports kafkajs or amqplib, then the linter fails`, () => {
      for (const lib of ["kafkajs", "amqplib"]) {
        const result = lintAs(path, `import x from "${lib}";\nexport const y = x;\n`);
        expect(result.status, lib).not.toBe(0);
        expect(result.stdout + result.stderr).toMatch(/Only messaging\/ knows/);
      }
    });
  }

  it("When code in messaging/ imports kafkajs, then the linter allows it", () => {
    const result = lintAs(
      "orders-api/src/messaging/probe.ts",
      `import { Kafka } from "kafkajs";
\nexport const k = Kafka;\n`,
    );
    expect(result.stdout + result.stderr).not.toMatch(/noRestrictedImports/);
  });
});

describe("Safety nets: npm run typecheck reads every TypeScript file (issue 14)", () => {
  it("When the typecheck runs, then every tracked .ts file outside web/ is one it reads (web/ has its own tsconfig)", () => {
    const tracked = spawnSync("git", ["ls-files", "*.ts", "*.tsx"], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      .filter((f) => f && !f.startsWith("web/"));
    const listed = new Set(
      spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.json", "--listFilesOnly"], {
        cwd: ROOT,
        encoding: "utf8",
      })
        .stdout.split("\n")
        .filter((f) => f.startsWith(ROOT) && !f.includes("/node_modules/"))
        .map((f) => f.slice(ROOT.length + 1)),
    );
    expect(tracked.length).toBeGreaterThan(100);
    expect(tracked.filter((f) => !listed.has(f))).toEqual([]);
  }, 60_000);
});

describe("Rule B23: each broker-edition service owns its database", () => {
  /** Every TypeScript source file of a service, with its text. */
  const sourcesOf = (dir: string) =>
    spawnSync("git", ["ls-files", `${dir}/src`], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      .filter((f) => f.endsWith(".ts"))
      .map((f) => ({ file: f, text: readFileSync(join(ROOT, f), "utf8") }));

  it("When the orders and payments services' code is read, then neither imports the other's code nor names the other's database, and their default databases differ", () => {
    const pairs = [
      ["broker/orders", "broker/payments", "payments.db"],
      ["broker/payments", "broker/orders", "orders.db"],
    ] as const;
    for (const [own, other, otherDb] of pairs) {
      const sources = sourcesOf(own);
      expect(sources.length).toBeGreaterThan(3);
      for (const { file, text } of sources) {
        expect(text, file).not.toContain(`${other.split("/")[1]}/src`);
        expect(text, file).not.toContain(otherDb);
      }
    }
    const defaultDb = (service: string) =>
      readFileSync(join(ROOT, service, "src/config.ts"), "utf8").match(/dbPath: "([^"]+)"/)?.[1];
    expect(defaultDb("broker/orders")).toBe(".data/orders.db");
    expect(defaultDb("broker/payments")).toBe(".data/payments.db");
  });
});

describe("Tools do not import tests: lab, bench, infra and the services share harness/, not test/", () => {
  it("When every tracked TypeScript file outside the tests is read, then none imports a file under a test folder", () => {
    const isTest = (f: string) => /(^|\/)test\//.test(f) || /\.test\.tsx?$/.test(f);
    const files = spawnSync("git", ["ls-files", "*.ts", "*.tsx"], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      // vitest.config.ts is the tests' own configuration.
      .filter((f) => f && !isTest(f) && f !== "vitest.config.ts");
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain("bench/pipeline.ts");
    const offenders: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const [, target] of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
        const resolved = join(dirname(file), target ?? "");
        if (isTest(resolved)) offenders.push(`${file} imports ${resolved}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("RabbitMQ's tools run asynchronously (issue 34.6)", () => {
  it("When every tracked TypeScript file is read, then none runs rabbitmqctl, rabbitmq-plugins or rabbitmq-server synchronously", () => {
    const files = spawnSync("git", ["ls-files", "*.ts", "*.tsx"], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      .filter((f) => f && f !== "test/integration/infra/architecture.test.ts");
    const sync =
      /(?:spawnSync|execFileSync|execSync)\(\s*["'`]rabbitmq(?:ctl|-plugins|-server|-diagnostics)/;
    const offenders = files.filter((f) => sync.test(readFileSync(join(ROOT, f), "utf8")));
    expect(sync.test('spawnSync("rabbitmqctl", ["stop"])')).toBe(true);
    expect(offenders).toEqual([]);
  });
});
