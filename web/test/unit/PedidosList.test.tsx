import type { Pedido } from "@shop/contracts";
import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { aPedido } from "../../../test/helpers/fixtures.ts";
import { PedidosList } from "../../src/components/PedidosList.tsx";

afterEach(cleanup);

const pedido = (id: number, status: Pedido["status"], extra: Partial<Pedido> = {}): Pedido =>
  aPedido({ id, cliente: `cliente ${id}`, item: `item ${id}`, status, ...extra });

describe("The order list", () => {
  it("When orders arrive, then each row shows every column, money formatted and status as a badge, in the order given (newest first)", () => {
    render(
      <PedidosList
        pedidos={[
          pedido(2, "RECUSADO", {
            motivo: "limite do cartão de teste",
            processadoPor: "caixa-2",
            valor: 150,
          }),
          pedido(1, "PAGO", { processadoPor: "caixa-1" }),
        ]}
        error={null}
        updatedAt={new Date()}
      />,
    );
    const rows = screen.getAllByRole("row").slice(1);
    expect(rows.map((r) => r.getAttribute("data-pedido"))).toEqual(["2", "1"]);
    const first = within(rows[0] as HTMLElement);
    expect(first.getByText(/R\$\s*150,00/)).toBeTruthy();
    expect(first.getByText("Recusado").getAttribute("data-status")).toBe("RECUSADO");
    expect(first.getByText("limite do cartão de teste")).toBeTruthy();
    expect(first.getByText("caixa-2")).toBeTruthy();
    // pt-BR, in the browser's own time zone.
    const local = new Intl.DateTimeFormat("pt-BR", {
      dateStyle: "short",
      timeStyle: "medium",
    }).format(new Date("2026-11-21T10:00:00.000Z"));
    expect(first.getByText(local).getAttribute("datetime")).toBe("2026-11-21T10:00:00.000Z");
    expect(within(rows[1] as HTMLElement).getByText("Pago").className).toContain("badge-pago");
  });

  it("When a status changes between polls, then that row is highlighted", () => {
    const { rerender } = render(
      <PedidosList
        pedidos={[pedido(1, "AGUARDANDO_PAGAMENTO")]}
        error={null}
        updatedAt={new Date()}
      />,
    );
    expect(screen.getAllByRole("row")[1]?.className).toBe("");
    rerender(
      <PedidosList
        pedidos={[pedido(1, "PAGO", { processadoPor: "caixa-1" })]}
        error={null}
        updatedAt={new Date()}
      />,
    );
    expect(screen.getAllByRole("row")[1]?.className).toBe("mudou");
  });

  it("When the API cannot be reached, then the list says so and keeps the last data", () => {
    render(
      <PedidosList
        pedidos={[pedido(1, "PAGO")]}
        error="Failed to fetch"
        updatedAt={new Date("2026-11-21T10:00:05Z")}
      />,
    );
    expect(screen.getByRole("alert").textContent).toMatch(
      /Sem resposta da API de pedidos.*Mostrando os dados de \d\d:\d\d:\d\d/,
    );
    expect(screen.getAllByRole("row")).toHaveLength(2);
  });
});
