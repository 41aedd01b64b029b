import type { Plataforma } from "@shop/contracts";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PlataformaPanel } from "../../src/components/PlataformaPanel.tsx";

afterEach(cleanup);

const partition = (
  n: number,
  leader: number,
  isr: number[],
): Plataforma["topicos"][0]["particoes"][0] => ({
  partition: n,
  endOffset: 10,
  leader,
  replicas: [1, 2, 3],
  isr,
  grupos: [{ grupo: "pagamentos", committedOffset: 10, lag: 0 }],
});

const plataforma = (
  particoes: Plataforma["topicos"][0]["particoes"],
  up: number[] = [1, 3],
): Plataforma => ({
  cluster: {
    brokers: up.map((nodeId) => ({ nodeId, host: "127.0.0.1", port: 9090 + 2 * nodeId })),
    controller: 3,
  },
  topicos: [{ topic: "pedidos-criados", particoes }],
  grupos: [],
  outbox: null,
  lidoEm: "2026-11-23T10:00:00.000Z",
});

describe("The platform panel on a cluster", () => {
  it("When every partition has its leader and all replicas in sync, then it shows them and flags nothing", () => {
    render(
      <PlataformaPanel
        plataforma={plataforma([partition(0, 1, [1, 2, 3]), partition(1, 2, [1, 2, 3])], [1, 2, 3])}
        error={null}
      />,
    );
    expect(screen.getByTestId("lider-pedidos-criados-0").textContent).toBe("1");
    expect(screen.getByTestId("isr-pedidos-criados-1").textContent).toBe("[1, 2, 3] / [1, 2, 3]");
    expect(screen.queryByText(/sub-replicada/)).toBeNull();
    expect(screen.queryByText(/sem líder/)).toBeNull();
    // Issue 47: no broker is called the controller (in KRaft the metadata's controller id is any live broker).
    expect(screen.getByTestId("brokers").textContent).toMatch(/^Brokers no ar: 1 2 3\s*$/);
    expect(screen.queryByTestId("brokers-fora")).toBeNull();
  });

  it("When a broker is down, then its partitions are flagged under-replicated, and one with no replica in sync up is flagged without a leader", () => {
    render(
      <PlataformaPanel
        plataforma={plataforma([partition(0, 1, [1, 3]), partition(1, -1, [2])])}
        error={null}
      />,
    );
    expect(screen.getByTestId("isr-pedidos-criados-0").textContent).toContain("sub-replicada");
    expect(screen.getByTestId("lider-pedidos-criados-1").textContent).toContain(
      "sem líder: partição fora do ar",
    );
    expect(screen.getByTestId("brokers").textContent).toMatch(
      /^Brokers no ar: 1 3\s+Fora do ar: 2 /,
    );
  });

  it("Issue 33: when a node holding replicas is missing from the brokers up, then one render (one poll) names it down beside its partitions flagged under-replicated", () => {
    render(
      <PlataformaPanel
        plataforma={plataforma(
          [partition(0, 1, [1, 3]), partition(1, 3, [1, 3]), partition(2, 1, [1, 2, 3])],
          [1, 3],
        )}
        error={null}
      />,
    );
    expect(screen.getByTestId("brokers-fora").textContent).toMatch(
      /Fora do ar: 2 \(2 partições sub-replicadas\)/,
    );
    expect(screen.getByTestId("isr-pedidos-criados-0").textContent).toContain("sub-replicada");
    expect(screen.getByTestId("isr-pedidos-criados-2").textContent).not.toContain("sub-replicada");
  });
});
