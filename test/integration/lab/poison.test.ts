import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- poison", () => {
  it("When a poison result is written, then it is the one dead letter with its reason, the partition moves on, and its fixed copy is applied", async () => {
    await expectPassed("poison", [
      /^PASS the poison is the one letter in \S+pagamentos-resultados\.dlq, from partition \d offset \d+, reason: ResultadoPagamento: status/,
      /^PASS the partition moved on: order \d+'s result behind the poison applied \(PAGO\)/,
      /^PASS the fixed copy was applied: order \d+ PAGO, its letter marked redriven/,
      /^PASS nothing else moved/,
    ]);
  }, 270_000);
});
