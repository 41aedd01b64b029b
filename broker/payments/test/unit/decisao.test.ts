import { describe, expect, it } from "vitest";
import {
  type Decisao,
  decide,
  differenceFrom,
  MOTIVO_APROVADO,
  MOTIVO_RECUSADO,
} from "../../src/domain/decisao.ts";

describe("Rule B13: a deterministic decision", () => {
  it("When the cenario is APROVAR, then it approves; RECUSAR refuses; always the same", () => {
    expect(decide("APROVAR")).toEqual({ aprovado: true, motivo: MOTIVO_APROVADO });
    expect(decide("RECUSAR")).toEqual({ aprovado: false, motivo: MOTIVO_RECUSADO });
    expect(decide("APROVAR")).toEqual(decide("APROVAR"));
  });
});

describe("Rule B15: the same key with other content fails", () => {
  const d: Decisao = {
    solicitacaoId: "s",
    pedidoId: "p",
    valorCentavos: 100,
    cenario: "APROVAR",
    aprovado: true,
    motivo: "m",
  };
  it("When pedidoId, valor and cenario match, then it is the same request", () => {
    expect(differenceFrom(d, { pedidoId: "p", valorCentavos: 100, cenario: "APROVAR" })).toBeNull();
  });
  it("When any of them differs, then the reason says which", () => {
    expect(differenceFrom(d, { pedidoId: "q", valorCentavos: 100, cenario: "APROVAR" })).toMatch(
      /pedidoId/,
    );
    expect(differenceFrom(d, { pedidoId: "p", valorCentavos: 101, cenario: "APROVAR" })).toMatch(
      /valor/,
    );
    expect(differenceFrom(d, { pedidoId: "p", valorCentavos: 100, cenario: "RECUSAR" })).toMatch(
      /cenario/,
    );
  });
});
