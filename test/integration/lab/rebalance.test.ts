import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- rebalance", () => {
  it("When three payments instances share the partitions and two leave, then the partitions move, decisions go on and nothing is lost", async () => {
    await expectPassed(
      "rebalance",
      [
        /^PASS three instances held one partition each/,
        /^PASS after caixa-3 left, its partition moved: caixa-1 holds .*; caixa-2 holds/,
        /^PASS after caixa-2 left, caixa-1 held all three partitions/,
        /^PASS decisions went on: .* the last 6 by caixa-1 alone/,
        /^PASS nothing lost: 18 orders, each decided .* and applied once/,
      ],
      // The lesson's 3 s per record, shortened: the same moves, in half the time.
      { TEMPO_DECISAO_MS: "1000" },
    );
  }, 270_000);
});
