import { describe, expect, it } from "vitest";
import { madeSince, uniqueName } from "../../harness/env.ts";
import { checkoutId } from "../../infra/config.ts";

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

  it("leave out a second checkout's topics made in the same minutes (issue 34.6)", () => {
    const since = Date.now();
    const mine = uniqueName("orders");
    const other = checkoutId() === "000000" ? "ffffff" : "000000";
    const theirs = mine.replace(/-([0-9a-f]{6})([0-9a-f]{2})$/, `-${other}$2`);
    expect(theirs).not.toBe(mine);
    expect(madeSince(mine, since)).toBe(true);
    expect(madeSince(theirs, since)).toBe(false);
    expect(madeSince(`${theirs}.pedidos.criados`, since)).toBe(false);
  });
});
