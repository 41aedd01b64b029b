import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { SECONDS } from "../sequencer.ts";

describe("The order the suite runs its files in (test/sequencer.ts)", () => {
  it("When the suite weighs its slow files, then each one named is a test file that exists, so that a renamed file does not silently lose its place", () => {
    const named = Object.keys(SECONDS);
    expect(named.length).toBeGreaterThan(10);
    for (const file of named) {
      expect(file, file).toMatch(/\.test\.ts$/);
      expect(existsSync(join(ROOT, file)), file).toBe(true);
    }
  });
});
