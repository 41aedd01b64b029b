import type { PlataformaBroker } from "@shop/contracts";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { BrokerPanel } from "../../src/components/BrokerPanel.tsx";

afterEach(cleanup);

const nodes = ["shop-1@localhost", "shop-2@localhost", "shop-3@localhost"];
const plataforma = (over: Partial<PlataformaBroker["filas"][0]>, down: string[] = []) =>
  ({
    nos: nodes.map((nome) => ({ nome, ativo: !down.includes(nome) })),
    filas: [
      {
        nome: "pagamentos.solicitacoes",
        tipo: "quorum",
        lider: "shop-1@localhost",
        membros: nodes,
        emLinha: nodes,
        mensagens: 3,
        ...over,
      },
    ],
    lidoDe: "http://127.0.0.1:15682",
    lidoEm: "2026-11-23T10:00:00.000Z",
  }) satisfies PlataformaBroker;

describe("The RabbitMQ panel (issue 17)", () => {
  it("When every node runs, then each queue shows its leader and all members online, nothing flagged", () => {
    render(<BrokerPanel plataforma={plataforma({})} error={null} />);
    expect(screen.getByTestId("lider-pagamentos.solicitacoes").textContent).toBe(
      "shop-1@localhost",
    );
    expect(screen.getByTestId("membros-pagamentos.solicitacoes").textContent).toBe("3 de 3");
    expect(screen.getByTestId("nos").textContent).not.toContain("(fora do ar)");
  });

  it("When the leader's node is down, then the node is shown down, the member offline, and a queue with no leader is flagged", () => {
    const down = "shop-1@localhost";
    render(
      <BrokerPanel
        plataforma={plataforma({ lider: null, emLinha: nodes.filter((n) => n !== down) }, [down])}
        error={null}
      />,
    );
    expect(screen.getByTestId("nos").textContent).toContain(`${down} (fora do ar)`);
    expect(screen.getByTestId("membros-pagamentos.solicitacoes").textContent).toBe(
      `2 de 3 fora de linha: ${down}`,
    );
    expect(screen.getByTestId("lider-pagamentos.solicitacoes").textContent).toBe("sem líder");
  });
});
