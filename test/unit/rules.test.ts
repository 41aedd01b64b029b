import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { defines, trackedFiles } from "../helpers/source.ts";

interface Rule {
  tests: { file: string; name: string }[];
  code: { file: string; fn: string }[];
}

/**
 * docs/rules.md: each rule (`**E7.**`) with the code it names (`- Code: [file](../file) ›
 * \`fn\``) and the tests it names (`- \`file\` › "name"`).
 */
function rules(): Map<string, Rule> {
  const found = new Map<string, Rule>();
  let current: string | null = null;
  for (const line of readFileSync(join(ROOT, "docs/rules.md"), "utf8").split("\n")) {
    const rule = line.match(/^\*\*([EB]\d+)\.\*\* \S/);
    if (rule) {
      current = rule[1] as string;
      expect(found.has(current), `${current} twice`).toBe(false);
      found.set(current, { tests: [], code: [] });
      continue;
    }
    const test = line.match(/^- `([^`]+)` › "(.+)"$/);
    if (test && current)
      found.get(current)?.tests.push({ file: test[1] as string, name: test[2] as string });
    const code = line.match(/^- Code: \[([^\]]+)\]\(\.\.\/([^)]+)\) › `(\w+)`$/);
    if (code && current) {
      expect(code[1], `${current}: the link and its text name one file`).toBe(code[2]);
      found.get(current)?.code.push({ file: code[1] as string, fn: code[3] as string });
    }
  }
  return found;
}

/** The rules a text names: `Rule E7`, `Rules B16 and B17`, `Rules E9, E10 and E11`. */
function rulesNamed(text: string): string[] {
  return [...text.matchAll(/\bRules? ((?:[EB]\d+)(?:(?:, | and )[EB]\d+)*)\b/g)].flatMap((m) =>
    [...(m[1] as string).matchAll(/[EB]\d+/g)].map((r) => r[0]),
  );
}

describe("docs/rules.md: every rule proven by a test, every test's rule written down (issue 34)", () => {
  it("When the rules are read, then each of both editions has a number of its own and names at least one test, each in a file that exists and holds that name", () => {
    const all = rules();
    expect([...all.keys()].filter((r) => r.startsWith("E")).length).toBeGreaterThanOrEqual(13);
    expect([...all.keys()].filter((r) => r.startsWith("B")).length).toBeGreaterThanOrEqual(22);
    for (const [rule, { tests }] of all) {
      expect(tests.length, `${rule} names no test`).toBeGreaterThan(0);
      for (const { file, name } of tests) {
        expect(existsSync(join(ROOT, file)), `${rule}: ${file}`).toBe(true);
        const source = readFileSync(join(ROOT, file), "utf8").replace(/\s*\n\s*/g, " ");
        expect(source.includes(name), `${rule}: "${name}" in ${file}`).toBe(true);
      }
    }
  });

  it("Issue 48: when the rules are read, then each names the code that holds it, and each function named is defined in its file", () => {
    const all = rules();
    for (const [rule, { code }] of all) {
      expect(code.length, `${rule} names no code`).toBeGreaterThan(0);
      for (const { file, fn } of code) {
        expect(existsSync(join(ROOT, file)), `${rule}: ${file}`).toBe(true);
        expect(
          defines(readFileSync(join(ROOT, file), "utf8"), fn),
          `${rule}: ${fn} in ${file}`,
        ).toBe(true);
      }
    }
    // The check can fail: a name the file does not define is not taken for one.
    expect(defines("export function decide(v: number) {}", "decidir")).toBe(false);
    expect(defines("export function decide(v: number) {}", "decide")).toBe(true);
  });

  it("When a test file names a rule, then that rule is in docs/rules.md", () => {
    const known = new Set(rules().keys());
    const files = trackedFiles("*.test.ts", "*.test.tsx");
    expect(files.length).toBeGreaterThan(50);
    const unknown = files.flatMap((file) =>
      rulesNamed(readFileSync(join(ROOT, file), "utf8"))
        .filter((r) => !known.has(r))
        .map((r) => `${file}: ${r}`),
    );
    expect(unknown).toEqual([]);
    expect(rulesNamed("Rules B16 and B17: x; Rule E7; Rules E9, E10 and E11")).toEqual([
      "B16",
      "B17",
      "E7",
      "E9",
      "E10",
      "E11",
    ]);
  });
});
