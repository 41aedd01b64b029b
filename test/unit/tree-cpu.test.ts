import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { rootsOf, treeCpuMs } from "../../bench/stats.ts";

/**
 * Issue 49: the scale-out row adds PostgreSQL's CPU to the orders APIs'. Its server forks
 * backends and autovacuum workers that start and end during a run; the row measures the
 * whole tree, so that a worker that ended is not read as CPU given back.
 */
describe("CPU of a server's process tree (bench/stats.ts)", () => {
  it("When a worker starts, burns CPU and ends during a measurement, then the tree's CPU counts it, and its parent is the tree's root", async () => {
    // The parent starts a worker when told; the worker spins until it has used 300 ms of
    // CPU (not of wall time: the machine may be busy), and the parent reaps it.
    const parent = spawn(
      process.execPath,
      [
        "-e",
        `const { spawn, spawnSync } = require("node:child_process");
         const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
         console.log(sleeper.pid);
         process.stdin.once("data", () => {
           spawnSync(process.execPath, ["-e", "while (process.cpuUsage().user + process.cpuUsage().system < 300000) {}"]);
           console.log("reaped");
           sleeper.kill();
         });`,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    try {
      parent.stdout.setEncoding("utf8");
      const [sleeperPid] = (await once(parent.stdout, "data")) as [string];
      expect(rootsOf([Number(sleeperPid)])).toEqual([parent.pid]);
      const before = treeCpuMs([parent.pid as number]);
      parent.stdin.write("go\n");
      await once(parent.stdout, "data");
      expect(treeCpuMs([parent.pid as number]) - before).toBeGreaterThanOrEqual(280);
    } finally {
      parent.kill();
    }
  });
});
