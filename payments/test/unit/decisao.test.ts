import { toCents } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import { decide } from "../../src/domain/decisao.ts";

describe("Rule E6: approve when valor is at most 100.00, otherwise refuse", () => {
  it("When valor is 100.00, then it is approved (the limit is inclusive)", () => {
    expect(decide(toCents(100))).toEqual({ status: "APROVADO", motivo: null });
  });
  it("When valor is 100.01, then it is refused with the motivo 'limite do cartão de teste'", () => {
    expect(decide(toCents(100.01))).toEqual({
      status: "RECUSADO",
      motivo: "limite do cartão de teste",
    });
  });
  it("When valor is small, then it is approved", () => {
    expect(decide(toCents(0.01)).status).toBe("APROVADO");
  });
  it("When the same valor is decided twice, then the decision is the same", () => {
    expect(decide(12345)).toEqual(decide(12345));
  });
});
