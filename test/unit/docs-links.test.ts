import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";

/** README.md and every Markdown file under docs/, as paths from the repository's root. */
function documents(): string[] {
  const found = ["README.md"];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found;
}

/** Every Markdown link's target that is a path (not a URL, not an anchor of the same page). */
function relativeLinks(markdown: string): string[] {
  const outsideCode = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...outsideCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith("#"))
    .map((target) => target.split("#")[0] as string);
}

describe("The documentation's links (issue 34)", () => {
  it("When README.md and docs/ link to a file or folder, then it exists, inside the repository", () => {
    const broken: string[] = [];
    for (const doc of documents()) {
      for (const target of relativeLinks(readFileSync(join(ROOT, doc), "utf8"))) {
        const path = resolve(ROOT, dirname(doc), target);
        const inside = !relative(ROOT, path).startsWith("..");
        if (!inside || !existsSync(path)) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("When a newcomer opens README.md, then it is a front door of at most 200 lines that links every topic file of docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(200);
    const linked = new Set(relativeLinks(readme));
    const topics = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
    for (const topic of topics) expect(linked, topic).toContain(`docs/${topic}`);
  });

  it("When docs/code-tour.md names functions in a row of its tables, then each is still in that row's files (issue 35)", () => {
    const tour = readFileSync(join(ROOT, "docs/code-tour.md"), "utf8");
    const rows = tour.split("\n").filter((l) => /^\| \d+ \|/.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(16);
    const missing: string[] = [];
    for (const row of rows) {
      const files = [...row.matchAll(/\]\(\.\.\/([^)]+)\)/g)].map((m) => m[1] as string);
      const text = files.map((f) => readFileSync(join(ROOT, f), "utf8")).join("\n");
      for (const [, name] of row.matchAll(/`([A-Za-z_]\w*)`/g))
        if (!new RegExp(`\\b${name}\\b`).test(text)) missing.push(`${name} in ${files.join(", ")}`);
    }
    expect(missing).toEqual([]);
  });
});
