import { describe, expect, it } from "vitest";
import { inMoneyRange, MAX_CENTS, totalInCents } from "../../src/money.ts";
import { freeText, TEXT_LIMITS } from "../../src/text.ts";

const cliente = freeText(TEXT_LIMITS.cliente);

describe("Text a person typed (issue 14)", () => {
  it("When a text is within its limit, then it is trimmed and normalised to NFC", () => {
    expect(cliente.parse("  Jose\u0301 ")).toBe("José");
    expect(cliente.parse("☕".repeat(100))).toHaveLength(100);
  });

  it("When a text carries a control character, a bidi override or a lone surrogate, then it is refused", () => {
    for (const s of [
      "\u001b[31m",
      "a\u009bb",
      "a\u007fb",
      "a\u202eb",
      "a\u2066b",
      "a\ud800",
      "\udfff",
    ]) {
      expect(cliente.safeParse(s).success, JSON.stringify(s)).toBe(false);
    }
  });

  it("When a text is over its limit in code points, or blank, then it is refused", () => {
    expect(cliente.safeParse("x".repeat(101)).success).toBe(false);
    expect(cliente.safeParse("☕".repeat(101)).success).toBe(false);
    expect(cliente.safeParse("   ").success).toBe(false);
  });

  it("When a look-alike is typed, then it is kept as typed", () => {
    expect(cliente.parse("Аna")).toBe("Аna");
  });
});

describe("The one money range (issue 14)", () => {
  it("When an amount in cents is 1 to MAX_CENTS, then it is in range; otherwise not", () => {
    expect(inMoneyRange(1)).toBe(true);
    expect(inMoneyRange(MAX_CENTS)).toBe(true);
    expect(inMoneyRange(MAX_CENTS + 1)).toBe(false);
    expect(inMoneyRange(0)).toBe(false);
    expect(inMoneyRange(1.5)).toBe(false);
  });

  it("When lines are valid, then their total is exact in cents; when one is not, then null", () => {
    expect(totalInCents([{ quantidade: 50, precoUnitario: 20000001 }])).toBe(100_000_005_000);
    expect(
      totalInCents([
        { quantidade: 3, precoUnitario: 0.1 },
        { quantidade: 1, precoUnitario: 0.2 },
      ]),
    ).toBe(50);
    expect(totalInCents([{ quantidade: 1.5, precoUnitario: 1 }])).toBeNull();
    expect(totalInCents([{ quantidade: 1, precoUnitario: 1.001 }])).toBeNull();
  });
});
