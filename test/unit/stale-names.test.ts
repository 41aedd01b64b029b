import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript6";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { trackedFiles } from "../helpers/source.ts";

/**
 * Issue 48: comments and docs that name code which no longer exists send a learner to
 * nothing. A name of code (camelCase, PascalCase or UPPER_SNAKE_CASE) in a comment, or
 * between backticks in a doc, must be a name the code uses: an identifier, or a word of a
 * string (a route, a JSON field, an environment variable), comments left out.
 */

const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/** A name of code: two humps (camelCase, PascalCase) or two words in capitals (A_B). */
const CODE_NAME =
  /\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/g;

const WORD = /[A-Za-z_][A-Za-z0-9_]*/g;

/** The identifiers and the words of the strings of TypeScript source, without its comments. */
function namesUsed(source: string, into: Set<string>): void {
  const file = ts.createSourceFile("x.tsx", source, ts.ScriptTarget.Latest, false);
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) into.add(node.text);
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isJsxText(node))
      for (const w of node.text.match(WORD) ?? []) into.add(w);
    ts.forEachChild(node, visit);
  };
  visit(file);
}

/** The comments of TypeScript source, with the line each starts on. */
function comments(source: string): { line: number; text: string }[] {
  const file = ts.createSourceFile("x.tsx", source, ts.ScriptTarget.Latest, true);
  const found = new Map<number, string>();
  const visit = (node: ts.Node) => {
    for (const r of [
      ...(ts.getLeadingCommentRanges(source, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(source, node.getEnd()) ?? []),
    ])
      found.set(r.pos, source.slice(r.pos, r.end));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...found].map(([pos, text]) => ({
    line: file.getLineAndCharacterOfPosition(pos).line + 1,
    text,
  }));
}

/**
 * Names of other software that comments and docs rightly name: Node's and the JVM's APIs,
 * glibc's settings, lint rules, units and notations. Kafka's error codes and request names
 * come from kafkajs's own tables (below), not from this list.
 */
const OUTSIDE = [
  "AsyncLocalStorage",
  "AsyncResource",
  "memoryUsage",
  "DevTools",
  "fromString",
  "hashCode",
  "CompilerThread",
  "MALLOC_ARENA_MAX",
  "MALLOC_MMAP_THRESHOLD_",
  "MALLOC_TRIM_THRESHOLD_",
  // Kafka's own names of two errors kafkajs spells longer (GROUP_COORDINATOR_NOT_AVAILABLE,
  // NOT_LEADER_FOR_PARTITION); the Java client's, which the comments compare with.
  "COORDINATOR_NOT_AVAILABLE",
  "NOT_LEADER",
  "noExplicitAny",
  "noArrayIndexKey",
  "noNoninteractiveTabindex",
  "noTemplateCurlyInString",
  "camelCase",
  "PascalCase",
  "UPPER_SNAKE_CASE",
  "A_B",
  "overallRate",
  "KiB",
  "uXXXX",
];

/** Kafka's protocol errors (MESSAGE_TOO_LARGE, ...) and requests (OffsetFetch, ...), as kafkajs names them. */
function kafkaProtocolNames(): string[] {
  const kafkajs = join(ROOT, "node_modules/kafkajs/src/protocol");
  const errors = readFileSync(join(kafkajs, "error.js"), "utf8").matchAll(/type: '([A-Z_]+)'/g);
  const requests = readFileSync(join(kafkajs, "requests/apiKeys.js"), "utf8").matchAll(
    /^\s+(\w+): \d+/gm,
  );
  return [...errors, ...requests].map((m) => m[1] as string);
}

/** A name the code has; `ORDERS_DB_` (a prefix the text spells out) when one starts so. */
const has = (known: Set<string>, name: string) =>
  known.has(name) || (name.endsWith("_") && [...known].some((k) => k.startsWith(name)));

function codeNames(): Set<string> {
  const names = new Set<string>([...OUTSIDE, ...kafkaProtocolNames()]);
  for (const f of trackedFiles("*.ts", "*.tsx")) namesUsed(read(f), names);
  // What is not TypeScript but is the shop's code and settings.
  for (const f of trackedFiles("*.json", "*.yaml", "*.java", ".env.example", "Dockerfile", ".ci/*"))
    for (const w of read(f).match(WORD) ?? []) names.add(w);
  return names;
}

describe("Issue 48: no stale names in comments and docs", () => {
  const known = codeNames();

  it("When a comment names code, then the code has that name", () => {
    const stale: string[] = [];
    for (const file of trackedFiles("*.ts", "*.tsx"))
      for (const c of comments(read(file)))
        for (const name of c.text.match(CODE_NAME) ?? [])
          if (!has(known, name)) stale.push(`${file}:${c.line} ${name}`);
    expect(stale).toEqual([]);
  });

  it("When a doc names code between backticks, then the code has that name", () => {
    const stale: string[] = [];
    const docs = trackedFiles("README.md", "docs/*.md").filter((f) => !f.startsWith("docs/spec/"));
    for (const file of docs) {
      read(file)
        .split("\n")
        .forEach((line, i) => {
          for (const span of line.match(/`[^`]+`/g) ?? [])
            for (const name of span.match(CODE_NAME) ?? [])
              if (!has(known, name)) stale.push(`${file}:${i + 1} ${name}`);
        });
    }
    expect(stale).toEqual([]);
  });

  it("When a name is gone from the code, then the check finds it (it can fail)", () => {
    const names = new Set<string>();
    namesUsed(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the probe is source with a template.
      'const aliveName = 1; // deadName\nfetch(`/x/${aliveName}/tailName`); "quotedName";',
      names,
    );
    expect(names.has("aliveName")).toBe(true);
    expect(names.has("quotedName")).toBe(true);
    expect(names.has("tailName")).toBe(true);
    expect(names.has("deadName")).toBe(false);
    expect(
      comments("const a = 1; // see deadName\n/** and PublicacaoNaoConfirmada */").map(
        (c) => c.line,
      ),
    ).toEqual([1, 2]);
  });
});
