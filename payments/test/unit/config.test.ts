import { describe, expect, it } from "vitest";
import { EXACTLY_ONCE_COMMIT_MS, readConfig, SPEC_COMMIT_MS } from "../../src/config.ts";

describe("payments' commit interval", () => {
  it("When nothing is set, then offsets are committed every 5 s (the spec); exactly-once, every second, since a result is seen only once its transaction commits; a value set wins in both", () => {
    expect(readConfig({}).commitIntervalMs).toBe(SPEC_COMMIT_MS);
    expect(SPEC_COMMIT_MS).toBe(5000);
    expect(readConfig({ ENTREGA: "exatamente-uma-vez" }).commitIntervalMs).toBe(
      EXACTLY_ONCE_COMMIT_MS,
    );
    expect(EXACTLY_ONCE_COMMIT_MS).toBe(1000);
    for (const ENTREGA of ["pelo-menos-uma-vez", "exatamente-uma-vez"])
      expect(readConfig({ ENTREGA, COMMIT_INTERVAL_MS: "60000" }).commitIntervalMs).toBe(60000);
  });
});
