import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- replay", () => {
  it("When analytics runs in a new group, in auditoria, resumed and with --replay, then each full read matches the orders API's counts and the resumed one reads nothing", async () => {
    await expectPassed("replay", [
      /^PASS um grupo novo leu os 12 registros do offset 0, e o seu painel bate/,
      /^PASS auditoria, um segundo grupo, leu tudo de novo/,
      /^PASS o leitor reiniciado seguiu dos seus offsets confirmados: 0 registros lidos/,
      /^PASS --replay levou o grupo ao offset 0 e remontou o mesmo painel/,
    ]);
  }, 270_000);
});
