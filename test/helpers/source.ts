import { spawnSync } from "node:child_process";
import { ROOT } from "../../infra/config.ts";

/**
 * Whether TypeScript `source` defines `name`: a function, a method, a class, or a const
 * bound to one (or to a schema). Docs that name code (docs/rules.md, the code tours, the
 * page's timeline) are held to it by the tests that use this.
 */
export const defines = (source: string, name: string): boolean =>
  new RegExp(
    `(function\\*?\\s+${name}\\b|class\\s+${name}\\b|^\\s*(async\\s+)?${name}\\s*(<[^>]*>)?\\(|(const|let)\\s+${name}\\s*[=:])`,
    "m",
  ).test(source);

/** The files git tracks that match `patterns` (git's pathspecs: `*.test.ts`), from the root. */
export function trackedFiles(...patterns: string[]): string[] {
  return spawnSync("git", ["ls-files", ...patterns], { cwd: ROOT, encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean);
}

/**
 * The TypeScript source git tracks under `folders` (all of it when none is given), from the
 * root: tests, their folders and declarations left out.
 */
export function sourceFiles(...folders: string[]): string[] {
  const patterns = (folders.length > 0 ? folders.map((f) => `${f}/`) : [""]).flatMap((f) => [
    `${f}*.ts`,
    `${f}*.tsx`,
  ]);
  return trackedFiles(...patterns).filter(
    (f) => !/\.(test|d)\.tsx?$/.test(f) && !/(^|\/)test\//.test(f),
  );
}
