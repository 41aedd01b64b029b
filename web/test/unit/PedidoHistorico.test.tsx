import type { Historico, Pedido } from "@shop/contracts";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { aPedido } from "../../../test/helpers/fixtures.ts";
import { PedidoHistorico } from "../../src/components/PedidoHistorico.tsx";
import { PedidosList } from "../../src/components/PedidosList.tsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const historico: Historico = {
  pedidoId: 7,
  etapas: [
    { etapa: "criado", em: "2026-11-21T10:00:00.000Z", detalhes: { item: "caneca", valor: 37.8 } },
    {
      etapa: "evento-confirmado",
      em: "2026-11-21T10:00:00.020Z",
      detalhes: { topico: "pedidos-criados", particao: 2, offset: "41" },
    },
    {
      etapa: "decidido",
      em: "2026-11-21T10:00:03.030Z",
      detalhes: {
        instancia: "caixa-1",
        status: "APROVADO",
        motivo: null,
        particao: 2,
        offset: "40",
      },
    },
    { etapa: "resultado-aplicado", em: "2026-11-21T10:00:03.050Z", detalhes: { status: "PAGO" } },
  ],
};

describe("An order's timeline", () => {
  it("When a person opens an order, then its timeline is read from /pedidos/{id}/historico and shows each step in order with where it happened", async () => {
    const fetchMock = vi.fn(async () => new Response(JSON.stringify(historico), { status: 200 }));
    vi.stubGlobal("fetch", fetchMock);
    const abertos: number[] = [];
    const pedido: Pedido = aPedido({ id: 7, status: "PAGO", processadoPor: "caixa-1" });
    render(
      <PedidosList
        pedidos={[pedido]}
        error={null}
        updatedAt={new Date()}
        onOpenPedido={(id) => abertos.push(id)}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: "Abrir o histórico do pedido 7" }));
    expect(abertos).toEqual([7]);

    render(<PedidoHistorico apiUrl="http://api" pedidoId={7} onClose={() => {}} />);
    await waitFor(() => expect(document.querySelectorAll("li[data-etapa]")).toHaveLength(4));
    expect(fetchMock).toHaveBeenCalledWith("http://api/pedidos/7/historico");
    const etapas = [...document.querySelectorAll("li[data-etapa]")];
    expect(etapas.map((li) => li.getAttribute("data-etapa"))).toEqual([
      "criado",
      "evento-confirmado",
      "decidido",
      "resultado-aplicado",
    ]);
    expect(etapas[1]?.textContent).toContain("particao 2 · offset 41");
    expect(etapas[2]?.textContent).toContain("instancia caixa-1");
    expect(etapas[3]?.textContent).toContain("Resultado aplicado");
  });

  it("When the timeline cannot be read, then the person is told so", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response("{}", { status: 404 })),
    );
    render(<PedidoHistorico apiUrl="http://api" pedidoId={9} onClose={() => {}} />);
    expect((await screen.findByRole("alert")).textContent).toContain("404");
  });
});
