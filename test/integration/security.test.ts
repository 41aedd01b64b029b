import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";

/** Security checks run in CI on what is committed (git's index and work tree). */
const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "" && !f.includes("node_modules/"));
const source = tracked.filter(
  (f) => /\.(ts|tsx|js|mjs|cjs|java|sh|ya?ml|json|properties)$/.test(f) || f === ".ci/run",
);

describe("Security checks", () => {
  it("When the repository is scanned, then no .env, database, key or jar is committed", () => {
    const forbidden = tracked.filter((f) =>
      /(^|\/)\.env$|\.(db|sqlite3?|pem|key|p12|jar)$|(^|\/)id_(rsa|ed25519)/.test(f),
    );
    expect(forbidden).toEqual([]);
  });

  it("When the repository is scanned, then no credential literal is committed (only placeholders in .env.example)", () => {
    const literal =
      /(password|passwd|senha|secret|token|BROKER_PASSWORD|RABBITMQ_DEFAULT_PASS)["']?\s*[:=]\s*["']?(?![$<{(]|process\.env|z\.|e\.|r\.|b\.|\w+\.\w+\(|undefined|null|string|secret\()[A-Za-z0-9+/_-]{6,}/i;
    const hits: string[] = [];
    for (const file of source) {
      if (/\.test\.tsx?$/.test(file) || file.startsWith("test/")) continue;
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (literal.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
    const example = readFileSync(join(ROOT, ".env.example"), "utf8");
    expect(example).toMatch(/^BROKER_PASSWORD=<[^>]+>$/m);
  });

  it("When SQL is written, then values go through parameters: no string interpolation inside prepare() or exec()", () => {
    const interpolated: string[] = [];
    for (const file of source.filter((f) => /\.tsx?$/.test(f) && !f.includes("/test/"))) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const m of text.matchAll(/\.(prepare|exec)(<[^>]*>)?\(\s*`([^`]*)`/g)) {
        if ((m[3] as string).includes("${"))
          interpolated.push(`${file}: ${(m[3] as string).slice(0, 80)}`);
      }
      for (const m of text.matchAll(/\.(prepare|exec)(<[^>]*>)?\(\s*(["'])([^"']*)\3\s*\+/g))
        interpolated.push(`${file}: ${m[4]}`);
    }
    expect(interpolated).toEqual([]);
  });
});
