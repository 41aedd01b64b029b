import { describe, expect, it } from "vitest";
import { madeSince, uniqueName } from "../helpers/kafka.ts";

/** The integration run's teardown deletes the topics its tests made, and only those. */
describe("the topics a test run made", () => {
  it("are told apart by uniqueName's time stamp, whole or under a prefix", () => {
    const since = Date.now();
    const name = uniqueName("orders");
    expect(madeSince(name, since)).toBe(true);
    expect(madeSince(`${name}.pedidos.criados`, since)).toBe(true);
    expect(madeSince(`${name}.pedidos.criados.dlq`, since)).toBe(true);
  });

  it("leave out an earlier run's topics and the shop's own names", () => {
    const earlier = `orders-${(Date.now() - 60_000).toString(36)}-0a1b2c3d.pedidos.criados`;
    expect(madeSince(earlier, Date.now())).toBe(false);
    for (const own of ["pedidos.criados", "pagamentos.resultados", "pedidos.criados.dlq"])
      expect(madeSince(own, 0)).toBe(false);
    // Hyphens and hex in a person's topic name are not a stamp.
    expect(madeSince("loja-pedidos-2026-deadbeef", 0)).toBe(false);
    expect(madeSince("loja-relatorios-deadbeef.pedidos", 0)).toBe(false);
  });
});
