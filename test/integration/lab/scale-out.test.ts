import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- scale-out", () => {
  it("Issue 37: when two orders APIs share PostgreSQL and one is killed, then both held result partitions, the other takes them all and nothing is lost", async () => {
    await expectPassed("scale-out", [
      /^PASS as duas instâncias tinham partições de resultados \(orders-api-1 com .*; orders-api-2 com/,
      /^PASS depois que orders-api-1 morreu, a outra assumiu as partições dela: orders-api-2 com as partições 0, 1, 2/,
      /^PASS todo pedido foi respondido 201/,
      /^PASS nada perdido: 20 pedidos, cada um decidido e aplicado uma vez/,
    ]);
  }, 270_000);
});
