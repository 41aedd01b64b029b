import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Reporter, SerializedError, TestModule, Vitest } from "vitest/node";
import { forgetInMemoryScratch } from "../infra/scratch.ts";
import { markdownTable, REPORT_FILE, readRows } from "./faults/report.ts";

/** One test file's run: which project, and when it started and ended, in seconds from the run's start. */
export interface FileTime {
  file: string;
  project: string;
  startS: number;
  endS: number;
}

/**
 * Ends the run with what a reader of its last screen needs, in this order: the table of the
 * fault scenarios this run tried (docs/RELIABILITY.md), the failed tests again with their
 * first lines of error (vitest prints them above, where a long table scrolled them out of a
 * CI's tail), and one plain line, "tests: N passed, N failed", that any CI can read. It also
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

  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError> = [],
  ): void {
    // What the tests made in memory (vitest.config.ts) is not left taking the machine's RAM.
    forgetInMemoryScratch(this.root);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const recap: string[] = [];
    for (const module of testModules) {
      const file = relative(this.root, module.moduleId);
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") passed++;
        else if (result.state === "failed") {
          failedHere++;
          recap.push(failure(`${file} > ${test.fullName}`, result.errors ?? []));
        } else skipped++;
      }
      // A file that failed outside its tests (import error, failing hook) counts as one failure.
      if (module.state() === "failed" && failedHere === 0) {
        failedHere = 1;
        recap.push(failure(file, module.errors()));
      }
      failed += failedHere;
    }
    for (const error of unhandledErrors) recap.push(failure("unhandled error", [error]));
    const out: string[] = [];
    // The fault table, when this run's fault files wrote one (test/faults/report.ts).
    if (existsSync(REPORT_FILE) && statSync(REPORT_FILE).mtimeMs >= this.runStart) {
      out.push(`Fault scenarios of this run:\n\n${markdownTable(readRows())}\n`);
    }
    if (recap.length > 0) out.push(`Failed (${recap.length}), again:\n\n${recap.join("\n")}\n`);
    const tail = skipped > 0 ? `, ${skipped} skipped` : "";
    out.push(`tests: ${passed} passed, ${failed} failed${tail}\n`);
    process.stdout.write(`\n${out.join("\n")}`);
    if (this.times.length > 0) {
      const dir = join(this.root, "test-artifacts");
      mkdirSync(dir, { recursive: true });
      const byStart = [...this.times].sort((a, b) => a.startS - b.startS);
      writeFileSync(join(dir, "file-times.json"), `${JSON.stringify(byStart, null, 1)}\n`);
    }
  }
}

/** A failed test or file, with the first lines of each error: enough to know where to look. */
function failure(where: string, errors: ReadonlyArray<{ message?: string }>): string {
  const lines = errors.flatMap((e) => (e.message ?? "").split("\n").slice(0, 6));
  return [`  ✗ ${where}`, ...lines.map((l) => `      ${l}`)].join("\n");
}
