import { describe, expect, it } from "vitest";
import { newPedido, resultadoEffect } from "../../src/domain/pedido.ts";

const agora = new Date("2026-11-21T10:00:00.000Z");

describe("Order (event-log edition)", () => {
  it("When an order is created, then valor is quantidade × precoUnitario in cents and it awaits payment", () => {
    const p = newPedido(
      { cliente: "Ana", item: "caneca", quantidade: 3, precoUnitario: 0.1 },
      agora,
    );
    expect(p.valorCentavos).toBe(30);
    expect(p.status).toBe("AGUARDANDO_PAGAMENTO");
    expect(p.motivo).toBeNull();
    expect(p.processadoPor).toBeNull();
    expect(p.criadoEm).toBe("2026-11-21T10:00:00.000Z");
  });

  it("When an APROVADO result arrives while awaiting payment, then the order becomes PAGO", () => {
    expect(
      resultadoEffect("AGUARDANDO_PAGAMENTO", {
        status: "APROVADO",
        motivo: null,
        instancia: "caixa-1",
      }),
    ).toEqual({
      apply: true,
      status: "PAGO",
      motivo: null,
      processadoPor: "caixa-1",
    });
  });

  it("When a RECUSADO result arrives while awaiting payment, then the order becomes RECUSADO with its motivo", () => {
    const e = resultadoEffect("AGUARDANDO_PAGAMENTO", {
      status: "RECUSADO",
      motivo: "limite do cartão de teste",
      instancia: "caixa-2",
    });
    expect(e).toMatchObject({
      apply: true,
      status: "RECUSADO",
      motivo: "limite do cartão de teste",
    });
  });

  it("When a result arrives for an order already PAGO or RECUSADO, then nothing changes", () => {
    for (const status of ["PAGO", "RECUSADO"] as const) {
      expect(
        resultadoEffect(status, { status: "RECUSADO", motivo: "x", instancia: "caixa-9" }).apply,
      ).toBe(false);
    }
  });
});
