import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Reporter, TestModule, Vitest } from "vitest/node";

/** One test file's run: which project, and when it started and ended, in seconds from the run's start. */
export interface FileTime {
  file: string;
  project: string;
  startS: number;
  endS: number;
}

/**
 * Ends the run with one plain line, "tests: N passed, N failed", that any CI can read, and
 * writes when each file ran to test-artifacts/file-times.json: what test/sequencer.ts's
 * weights are read from, and where a group's last seconds went (docs/testing.md).
 */
export default class SummaryReporter implements Reporter {
  private root = process.cwd();
  private readonly runStart = Date.now();
  private readonly started = new Map<string, number>();
  private readonly times: FileTime[] = [];

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.id, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const seconds = (ms: number) => Math.round((ms - this.runStart) / 100) / 10;
    this.times.push({
      file: relative(this.root, module.moduleId),
      project: module.project.name,
      startS: seconds(this.started.get(module.id) ?? Date.now()),
      endS: seconds(Date.now()),
    });
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      // A file that failed outside its tests (import error, failing hook) counts as one failure.
      if (module.state() === "failed" && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    const tail = skipped > 0 ? `, ${skipped} skipped` : "";
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${tail}\n`);
    if (this.times.length > 0) {
      const dir = join(this.root, "test-artifacts");
      mkdirSync(dir, { recursive: true });
      const byStart = [...this.times].sort((a, b) => a.startS - b.startS);
      writeFileSync(join(dir, "file-times.json"), `${JSON.stringify(byStart, null, 1)}\n`);
    }
  }
}
