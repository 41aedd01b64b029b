import { describe, expect, it } from "vitest";
import { trackedFiles } from "../helpers/source.ts";

/**
 * Issue 48: a test's folder says what kind of test it is (docs/testing.md): `test/unit/`
 * (pure code, no broker), `test/integration/` (the real brokers and databases) or
 * `test/faults/` (brokers and services killed), in a package or at the root.
 */
const KIND = /(^|\/)test\/(unit|integration|faults)\//;

describe("Issue 48: one test layout", () => {
  it("When the test files are listed, then each one's folder says its kind", () => {
    const files = trackedFiles("*.test.ts", "*.test.tsx");
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !KIND.test(f))).toEqual([]);
    expect(KIND.test("orders-api/src/domain/pedido.test.ts")).toBe(false);
  });
});
