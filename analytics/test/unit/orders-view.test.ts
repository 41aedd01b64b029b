import { describe, expect, it } from "vitest";
import { aDashboard, aPedidoCriado } from "../../../test/helpers/fixtures.ts";
import {
  applyPedidoCriado,
  applyResultado,
  dashboard,
  newOrdersView,
} from "../../src/domain/orders-view.ts";

const criado = (pedidoId: number, item: string, quantidade: number, valor: number) =>
  aPedidoCriado({ pedidoId, item, quantidade, valor });

describe("The analytics view", () => {
  it("When results disagree, then the first status received wins", () => {
    const v = newOrdersView();
    applyPedidoCriado(v, criado(1, "caneca", 1, 10));
    applyResultado(v, { pedidoId: 1, status: "RECUSADO" });
    applyResultado(v, { pedidoId: 1, status: "APROVADO" });
    expect(dashboard(v)).toMatchObject({ pedidosVistos: 1, pedidosPagos: 0, receitaCentavos: 0 });
  });

  it("When a result arrives before its creation event, then it is kept and joined, counted once", () => {
    const v = newOrdersView();
    applyResultado(v, { pedidoId: 7, status: "APROVADO" });
    expect(dashboard(v)).toMatchObject({
      pedidosVistos: 0,
      pedidosPagos: 0,
      resultadosSemPedido: 1,
    });
    applyPedidoCriado(v, criado(7, "livro", 2, 30.5));
    applyPedidoCriado(v, criado(7, "livro", 2, 30.5)); // a repeated creation event
    expect(dashboard(v)).toEqual(
      aDashboard({
        pedidosVistos: 1,
        pedidosPagos: 1,
        receitaCentavos: 3050,
        maisVendido: { item: "livro", quantidade: 2 },
      }),
    );
  });

  it("When approved and refused orders mix, then revenue sums the approved valor exactly, in cents", () => {
    const v = newOrdersView();
    const valores = [0.1, 0.2, 0.7, 19.99, 100, 100.01];
    valores.forEach((valor, i) => {
      applyPedidoCriado(v, criado(i + 1, `item-${i}`, 1, valor));
      applyResultado(v, { pedidoId: i + 1, status: valor <= 100 ? "APROVADO" : "RECUSADO" });
    });
    // 0.1 + 0.2 + 0.7 + 19.99 + 100 in floating point is 120.99000000000001
    expect(dashboard(v)).toMatchObject({
      pedidosVistos: 6,
      pedidosPagos: 5,
      receitaCentavos: 12099,
    });
  });

  it("When counting the best-selling item, then quantity over paid orders counts and ties go to the first name", () => {
    const v = newOrdersView();
    applyPedidoCriado(v, criado(1, "vela", 3, 3));
    applyPedidoCriado(v, criado(2, "bule", 2, 2));
    applyPedidoCriado(v, criado(3, "bule", 1, 1));
    applyPedidoCriado(v, criado(4, "xale", 50, 99)); // refused: does not count
    for (const id of [1, 2, 3]) applyResultado(v, { pedidoId: id, status: "APROVADO" });
    applyResultado(v, { pedidoId: 4, status: "RECUSADO" });
    expect(dashboard(v).maisVendido).toEqual({ item: "bule", quantidade: 3 });
  });

  it("When no order is paid, then there is no best-selling item", () => {
    expect(dashboard(newOrdersView()).maisVendido).toBeNull();
  });

  it("When it holds more orders than its first columns, then every order keeps its own item, amount and first status", () => {
    const v = newOrdersView();
    const n = 5_000; // the columns start at 1,024 slots and double
    for (let id = 1; id <= n; id++) {
      if (id % 2 === 0) applyResultado(v, { pedidoId: id, status: "APROVADO" }); // result first
      applyPedidoCriado(v, criado(id, `item-${id % 3}`, id % 4 === 0 ? 2 : 1, id % 10));
      applyResultado(v, { pedidoId: id, status: "RECUSADO" });
    }
    let receita = 0;
    const vendidos = [0, 0, 0];
    for (let id = 2; id <= n; id += 2) {
      receita += (id % 10) * 100;
      vendidos[id % 3] = (vendidos[id % 3] as number) + (id % 4 === 0 ? 2 : 1);
    }
    const best = Math.max(...vendidos);
    expect(v.size).toBe(n);
    expect(dashboard(v)).toEqual(
      aDashboard({
        pedidosVistos: n,
        pedidosPagos: n / 2,
        receitaCentavos: receita,
        maisVendido: { item: `item-${vendidos.indexOf(best)}`, quantidade: best },
      }),
    );
  });

  it("When order ids are far apart, then each order is still one order, its first status kept", () => {
    const v = newOrdersView();
    // Ids far past the others at first (indexed apart), then one of them within reach of
    // the dense ids read after it (moved into the index by id).
    const far = [70_000, 1e12, Number.MAX_SAFE_INTEGER];
    for (const id of far) applyResultado(v, { pedidoId: id, status: "APROVADO" });
    for (let id = 1; id <= 30_000; id++) applyPedidoCriado(v, criado(id, "a", 1, 1));
    for (const id of far) {
      applyPedidoCriado(v, criado(id, "b", 5, 2));
      applyResultado(v, { pedidoId: id, status: "RECUSADO" });
    }
    applyPedidoCriado(v, criado(70_000, "c", 50, 9)); // a repeat changes nothing
    expect(v.size).toBe(30_003);
    expect(dashboard(v)).toEqual(
      aDashboard({
        pedidosVistos: 30_003,
        pedidosPagos: 3,
        receitaCentavos: 600,
        maisVendido: { item: "b", quantidade: 15 },
      }),
    );
  });
});
