import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkoutId, forgetEndedRuns, inMemoryScratchPath } from "../../infra/scratch.ts";

describe("a test run's scratch folder in memory (infra/scratch.ts)", () => {
  it("When a run starts beside another run of the same checkout, then the other's folder stays, and those of runs that ended and the folder all runs once shared are deleted", () => {
    const shm = mkdtempSync(join(tmpdir(), "shm-"));
    const root = "/work/some-checkout";
    const id = checkoutId(root);
    // A pid that ran and has ended.
    const ended = spawnSync(process.execPath, ["-e", ""]).pid as number;
    const folders = {
      running: `shop-${id}-${process.pid}`,
      ended: `shop-${id}-${ended}`,
      shared: `shop-${id}`,
      otherCheckout: `shop-${checkoutId("/work/another")}-${ended}`,
    };
    for (const name of Object.values(folders))
      mkdirSync(join(shm, name, "kafka"), { recursive: true });
    forgetEndedRuns(root, shm);
    expect(readdirSync(shm).sort()).toEqual([folders.otherCheckout, folders.running].sort());
    expect(existsSync(join(shm, folders.running, "kafka"))).toBe(true);
    expect(inMemoryScratchPath(root, shm)).toBe(join(shm, folders.running));
  });
});
