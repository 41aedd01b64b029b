import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { sourceFiles } from "../helpers/source.ts";

/**
 * Issue 48: docs/configuration.md lists every environment variable the code reads, with
 * its default and the files that read it.
 */
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/**
 * The variables `source` reads: `process.env.X`, `env.X`, `env["X"]`, `import.meta.env.X`,
 * and, in a settings reader (a `config.ts`), the keys of its zod shapes (`X: z.…`).
 */
function variablesRead(file: string, source: string): Set<string> {
  const found = new Set<string>();
  const access =
    /(?:process\.env|import\.meta\.env|\benv)(?:\.([A-Z][A-Z0-9_]*)|\[\s*"([A-Z][A-Z0-9_]*)"\s*\])/g;
  for (const m of source.matchAll(access)) found.add((m[1] ?? m[2]) as string);
  if (/(^|\/)config\.ts$/.test(file))
    for (const m of source.matchAll(/^\s+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\??:\s/gm))
      found.add(m[1] as string);
  return found;
}

/** The rows of the page's tables: the variable and the files of its "Read by" column. */
function documented(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of read("docs/configuration.md").split("\n")) {
    const cells = line.split(" | ");
    const name = /^\| `([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? "")?.[1];
    if (!name) continue;
    expect(rows.has(name), `${name} twice`).toBe(false);
    rows.set(
      name,
      [...(cells[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    );
  }
  return rows;
}

describe("Issue 48: docs/configuration.md lists every variable the code reads", () => {
  it("When the code's sources are read, then every variable they read has its row, and every row's variable is read", () => {
    const inCode = new Map<string, string[]>();
    for (const file of sourceFiles())
      for (const name of variablesRead(file, read(file)))
        inCode.set(name, [...(inCode.get(name) ?? []), file]);
    expect(inCode.size).toBeGreaterThan(50);
    const rows = documented();
    const missing = [...inCode].filter(([name]) => !rows.has(name)).map(([n, f]) => `${n} (${f})`);
    expect(missing).toEqual([]);
    // compose.yaml reads what it hands to the containers under another name.
    const unread = [...rows.keys()].filter(
      (n) => !inCode.has(n) && !read("compose.yaml").includes(n),
    );
    expect(unread).toEqual([]);
  });

  it("When a row names the files that read its variable, then each exists and names it", () => {
    for (const [name, readers] of documented()) {
      expect(readers.length, `${name}: Read by`).toBeGreaterThan(0);
      for (const file of readers) {
        expect(existsSync(join(ROOT, file)), `${name}: ${file}`).toBe(true);
        expect(read(file), `${name} in ${file}`).toContain(name);
      }
    }
  });

  it("When a settings reader has a key or the code reads process.env, then the check finds it (it can fail)", () => {
    const reader = "z.object({\n  TEMPO_DECISAO_MS: z.coerce.number(),\n  lower: z.string(),\n});";
    expect([...variablesRead("payments/src/config.ts", reader)]).toEqual(["TEMPO_DECISAO_MS"]);
    expect([...variablesRead("x.ts", reader)]).toEqual([]);
    expect([...variablesRead("x.ts", 'process.env.NOVA ?? env["OUTRA"]')]).toEqual([
      "NOVA",
      "OUTRA",
    ]);
  });
});
