import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- rebalance", () => {
  it("When three payments instances share the partitions and two leave, then the partitions move, decisions go on and nothing is lost", async () => {
    await expectPassed(
      "rebalance",
      [
        /^PASS três instâncias com uma partição cada/,
        /^PASS depois que caixa-3 saiu, a partição dela mudou de dono: caixa-1 com .*; caixa-2 com/,
        /^PASS depois que caixa-2 saiu, caixa-1 ficou com as três partições/,
        /^PASS as decisões seguiram: .* os últimos 6 só por caixa-1/,
        /^PASS nada perdido: 18 pedidos, cada um decidido .* e aplicado uma vez/,
      ],
      // The lesson's 3 s per record, shortened: the same moves, in half the time.
      { TEMPO_DECISAO_MS: "1000" },
    );
  }, 270_000);
});
