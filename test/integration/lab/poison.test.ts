import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- poison", () => {
  it("When a poison result is written, then it is the one dead letter with its reason, the partition moves on, and its fixed copy is applied", async () => {
    await expectPassed("poison", [
      /^PASS o veneno é a única carta em \S+pagamentos-resultados\.dlq, da partição \d offset \d+, motivo: ResultadoPagamento: status/,
      /^PASS a partição seguiu: o resultado do pedido \d+, atrás do veneno, aplicado \(PAGO\)/,
      /^PASS a cópia corrigida foi aplicada: pedido \d+ PAGO, a carta marcada reenviada/,
      /^PASS nada mais mudou/,
    ]);
  }, 270_000);
});
