import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript6";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { sourceFiles } from "../helpers/source.ts";

/**
 * Issue 48: the code is part of the lesson, so its shape is checked like its behaviour.
 *  - No function (a factory included) longer than MAX_LINES in the services and CLIs: a
 *    reader follows a story through named functions, not through one closure's body.
 *  - No import cycle anywhere in the repository's source (docs/CONVENTIONS.md, "The layers of a service").
 */
const MAX_LINES = 60;
/** The services and CLIs a learner reads (libs/ are the wrappers, held by their own tests). */
const STORY_FOLDERS = [
  "orders-api/src",
  "payments/src",
  "broker/orders/src",
  "broker/payments/src",
  "analytics/src",
  "dlq/src",
];
/** Every folder of source code, for the import graph. */
const SOURCE_FOLDERS = [
  ...STORY_FOLDERS,
  "contracts/src",
  "libs",
  "web/src",
  "infra",
  "lab/src",
  "harness",
  "bench",
];
const parse = (file: string) =>
  ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);

/** Each function with a body, its name (or where it is assigned) and its length in lines. */
function functionLengths(file: string): { name: string; line: number; lines: number }[] {
  const source = parse(file);
  const found: { name: string; line: number; lines: number }[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const parent = node.parent;
      const name =
        (node as ts.FunctionDeclaration).name?.getText(source) ??
        (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
          ? parent.name.getText(source)
          : "(anonymous)");
      const line = lineOf(node.getStart(source));
      found.push({ name, line, lines: lineOf(node.end) - line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The workspace packages' entry files, by name (`@shop/kafka` → libs/kafka/src/index.ts). */
function workspaceEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    workspaces: string[];
  };
  const folders = root.workspaces.flatMap((w) =>
    w.endsWith("/*")
      ? readdirSync(join(ROOT, w.slice(0, -2)), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => join(w.slice(0, -2), e.name))
      : [w],
  );
  for (const folder of folders) {
    let pkg: { name?: string; exports?: Record<string, string> };
    try {
      pkg = JSON.parse(readFileSync(join(ROOT, folder, "package.json"), "utf8"));
    } catch {
      continue;
    }
    for (const [sub, target] of Object.entries(pkg.exports ?? {}))
      entries.set(`${pkg.name}${sub === "." ? "" : sub.slice(1)}`, join(ROOT, folder, target));
  }
  return entries;
}

/** Every import of a file that lands on another source file of the repository. */
function importsOf(file: string, entries: Map<string, string>): string[] {
  const source = parse(file);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      specifiers.push(node.moduleSpecifier.text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.flatMap((s) => {
    if (s.startsWith(".")) return [resolve(dirname(file), s)];
    const entry = entries.get(s);
    return entry ? [entry] : [];
  });
}

/** The strongly connected components of more than one file (Tarjan's algorithm). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

describe("Issue 48: the code's shape", () => {
  it(`When a service or CLI is read, then no function of it is longer than ${MAX_LINES} lines`, () => {
    const files = sourceFiles(...STORY_FOLDERS).map((f) => join(ROOT, f));
    expect(files.length).toBeGreaterThan(40);
    const long = files.flatMap((file) =>
      functionLengths(file)
        .filter((f) => f.lines > MAX_LINES)
        .map((f) => `${relative(ROOT, file)}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(long).toEqual([]);
  });

  // Issue 56: the page and the lab are read too, from a mark on the picture or a line of a
  // story to the function that made it: one named function per action and per part.
  it(`When the page and the lab are read, then no function of theirs is longer than ${MAX_LINES} lines`, () => {
    const files = sourceFiles("web/src", "lab/src").map((f) => join(ROOT, f));
    expect(files.length).toBeGreaterThan(30);
    const long = files.flatMap((file) =>
      functionLengths(file)
        .filter((f) => f.lines > MAX_LINES)
        .map((f) => `${relative(ROOT, file)}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(long).toEqual([]);
  });

  it("When the checker meets a long function, then it is found (the check can fail)", () => {
    const probe = join(ROOT, "test/unit/fixtures/long-function.ts");
    expect(functionLengths(probe).map((f) => [f.name, f.lines])).toEqual([["longFactory", 64]]);
  });

  it("When every source file's imports are followed, then no file imports itself through others (no cycle)", () => {
    const entries = workspaceEntries();
    const files = sourceFiles(...SOURCE_FOLDERS).map((f) => join(ROOT, f));
    const graph = new Map(files.map((f) => [f, importsOf(f, entries)]));
    expect(graph.size).toBeGreaterThan(150);
    // Imports are followed: the orders API's server reaches its store.
    expect(graph.get(join(ROOT, "orders-api/src/server.ts"))).toContain(
      join(ROOT, "orders-api/src/store/open.ts"),
    );
    expect(cycles(graph).map((c) => c.map((f) => relative(ROOT, f)).sort())).toEqual([]);
  });

  it("When two files import each other, then the cycle is found (the check can fail)", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(graph).map((c) => c.sort())).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });
});
