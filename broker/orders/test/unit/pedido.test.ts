import { describe, expect, it } from "vitest";
import {
  canAddItem,
  decidePagamentoRequest,
  type Pedido,
  resultadoEffect,
  type Solicitacao,
  totalOf,
} from "../../src/domain/pedido.ts";

const KEY = "5f0b6a86-8f0e-4b5e-9a51-2f8f3c1f6a01";
const pedido = (status: Pedido["status"]): Pedido => ({
  id: "p-1",
  clienteId: "c-1",
  status,
  itens: [{ sku: "CAFE", quantidade: 2, precoCentavos: 1890 }],
});
const registro = (over: Partial<Solicitacao> = {}): Solicitacao => ({
  solicitacaoId: KEY,
  pedidoId: "p-1",
  cenario: "APROVAR",
  valorCentavos: 3780,
  estado: "PENDENTE",
  aprovado: null,
  motivo: null,
  ...over,
});

describe("Order (broker edition)", () => {
  it("When items are 2 × 18.90, then the total is 37.80, computed in cents", () => {
    expect(totalOf(pedido("ABERTO").itens)).toBe(3780);
  });
  it("When the order is EM_PAGAMENTO or PAGO, then items are locked", () => {
    expect(canAddItem(pedido("ABERTO")).ok).toBe(true);
    expect(canAddItem(pedido("EM_PAGAMENTO")).ok).toBe(false);
    expect(canAddItem(pedido("PAGO")).ok).toBe(false);
  });
});

describe("Rules of POST /pedidos/{pedidoId}/pagamentos", () => {
  it("When the key is new and the order ABERTO, then a new request is stored", () => {
    expect(
      decidePagamentoRequest(pedido("ABERTO"), null, { solicitacaoId: KEY, cenario: "APROVAR" })
        .kind,
    ).toBe("new");
  });
  it("Rule B3: when the same key and content come again while PENDENTE, then it is published again", () => {
    expect(
      decidePagamentoRequest(pedido("EM_PAGAMENTO"), registro(), {
        solicitacaoId: KEY,
        cenario: "APROVAR",
      }).kind,
    ).toBe("republish");
  });
  it("Rule B4: when the same key and content come after the record is concluded, then the stored result is given", () => {
    const r = registro({ estado: "CONCLUIDA", aprovado: true, motivo: "ok" });
    expect(
      decidePagamentoRequest(pedido("PAGO"), r, { solicitacaoId: KEY, cenario: "APROVAR" }).kind,
    ).toBe("concluded");
  });
  it("Rule B5: when the same key comes with another cenario, another order or another valor, then it is a conflict", () => {
    expect(
      decidePagamentoRequest(pedido("EM_PAGAMENTO"), registro(), {
        solicitacaoId: KEY,
        cenario: "RECUSAR",
      }).kind,
    ).toBe("conflict");
    expect(
      decidePagamentoRequest({ ...pedido("ABERTO"), id: "p-2" }, registro(), {
        solicitacaoId: KEY,
        cenario: "APROVAR",
      }).kind,
    ).toBe("conflict");
    const maisItens = {
      ...pedido("ABERTO"),
      itens: [...pedido("ABERTO").itens, { sku: "PAO", quantidade: 1, precoCentavos: 100 }],
    };
    expect(
      decidePagamentoRequest(maisItens, registro({ estado: "CONCLUIDA", aprovado: false }), {
        solicitacaoId: KEY,
        cenario: "APROVAR",
      }).kind,
    ).toBe("conflict");
  });
  it("Rule B9: when the order is PAGO, or EM_PAGAMENTO under another key, then a new key is a conflict", () => {
    expect(
      decidePagamentoRequest(pedido("PAGO"), null, { solicitacaoId: KEY, cenario: "APROVAR" }).kind,
    ).toBe("conflict");
    expect(
      decidePagamentoRequest(pedido("EM_PAGAMENTO"), null, {
        solicitacaoId: KEY,
        cenario: "APROVAR",
      }).kind,
    ).toBe("conflict");
  });
});

describe("Orders consumer rules", () => {
  const ok = { pedidoId: "p-1", valorCentavos: 3780, aprovado: true };
  it("When an approval matches a PENDENTE record, then the order becomes PAGO", () => {
    expect(resultadoEffect(registro(), "EM_PAGAMENTO", ok)).toEqual({
      kind: "apply",
      pedidoStatus: "PAGO",
    });
  });
  it("When a refusal matches a PENDENTE record, then the order goes back to ABERTO", () => {
    expect(
      resultadoEffect(registro({ cenario: "RECUSAR" }), "EM_PAGAMENTO", {
        ...ok,
        aprovado: false,
      }),
    ).toEqual({
      kind: "apply",
      pedidoStatus: "ABERTO",
    });
  });
  it("When the record is already concluded, then a repeated result changes nothing", () => {
    expect(
      resultadoEffect(registro({ estado: "CONCLUIDA", aprovado: true }), "PAGO", ok).kind,
    ).toBe("repeated");
  });
  it("When a result never reopens a paid order, then even a refusal for a pending record leaves it PAGO", () => {
    expect(
      resultadoEffect(registro({ cenario: "RECUSAR" }), "PAGO", { ...ok, aprovado: false }),
    ).toEqual({
      kind: "apply",
      pedidoStatus: "PAGO",
    });
  });
  it("When pedidoId, valor or the outcome differ from the record, then it is a conflict", () => {
    expect(resultadoEffect(registro(), "EM_PAGAMENTO", { ...ok, pedidoId: "p-9" }).kind).toBe(
      "conflict",
    );
    expect(resultadoEffect(registro(), "EM_PAGAMENTO", { ...ok, valorCentavos: 1 }).kind).toBe(
      "conflict",
    );
    expect(resultadoEffect(registro(), "EM_PAGAMENTO", { ...ok, aprovado: false }).kind).toBe(
      "conflict",
    );
  });
});
