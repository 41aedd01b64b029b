import type { Plataforma } from "@shop/contracts";
import { act, cleanup, renderHook } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lagPerGroup, rebalanceSentences } from "../../src/platformHistory.ts";
import { usePolling } from "../../src/usePolling.ts";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/** A platform where `grupo`'s members hold these partitions of pedidos-criados. */
function plataforma(donos: Record<string, number[]>, lag = 0): Plataforma {
  return {
    topicos: [
      {
        topic: "pedidos-criados",
        particoes: [0, 1, 2].map((partition) => ({
          partition,
          endOffset: 10,
          leader: 1,
          replicas: [1],
          isr: [1],
          grupos: [{ grupo: "pagamentos", committedOffset: 10 - lag, lag }],
        })),
      },
    ],
    grupos: [
      {
        grupo: "pagamentos",
        estado: "Stable",
        membros: Object.entries(donos).map(([instancia, ps]) => ({
          memberId: `m-${instancia}`,
          clientId: `payments-${instancia}`,
          host: "/127.0.0.1",
          particoes: { "pedidos-criados": ps },
        })),
      },
    ],
    lidoEm: "2026-11-21T11:05:03.000Z",
  };
}

describe("The panel's story of a consumer group", () => {
  it("When caixa-2 joins and takes partitions 1 and 2, then one sentence says who joined, when, and which partitions changed hands", () => {
    const quando = new Date(2026, 10, 21, 11, 5, 3);
    const antes = plataforma({ "caixa-1": [0, 1, 2] });
    const depois = plataforma({ "caixa-1": [0], "caixa-2": [1, 2] });
    expect(rebalanceSentences(antes, depois, quando)).toEqual([
      "pagamentos: caixa-2 entrou às 11:05:03; partições 1 e 2 mudaram de dono",
    ]);
    expect(rebalanceSentences(depois, plataforma({ "caixa-1": [0, 1, 2] }), quando)).toEqual([
      "pagamentos: caixa-2 saiu às 11:05:03; partições 1 e 2 mudaram de dono",
    ]);
    expect(rebalanceSentences(depois, depois, quando)).toEqual([]);
  });

  it("When a group lags on every partition, then its lag is their sum", () => {
    expect(lagPerGroup(plataforma({ "caixa-1": [0, 1, 2] }, 4)).get("pagamentos")).toBe(12);
  });
});

describe("Polling", () => {
  it("When the tab is hidden, then the page stops polling; shown again, it polls at once and goes on", async () => {
    vi.useFakeTimers();
    let visibility: DocumentVisibilityState = "visible";
    Object.defineProperty(document, "visibilityState", {
      configurable: true,
      get: () => visibility,
    });
    const load = vi.fn(async () => "dados");
    renderHook(() => usePolling(load, 2000));
    await act(async () => vi.advanceTimersByTimeAsync(4100));
    expect(load).toHaveBeenCalledTimes(3); // at once, then at 2 s and 4 s

    visibility = "hidden";
    document.dispatchEvent(new Event("visibilitychange"));
    await act(async () => vi.advanceTimersByTimeAsync(10_000));
    expect(load).toHaveBeenCalledTimes(3);

    visibility = "visible";
    document.dispatchEvent(new Event("visibilitychange"));
    await act(async () => vi.advanceTimersByTimeAsync(10));
    expect(load).toHaveBeenCalledTimes(4);
    await act(async () => vi.advanceTimersByTimeAsync(2000));
    expect(load).toHaveBeenCalledTimes(5);
  });

  it("When a poll fails, then the last data stays and the error is said", async () => {
    vi.useFakeTimers();
    let falhar = false;
    const { result } = renderHook(() =>
      usePolling(async () => {
        if (falhar) throw new Error("sem resposta");
        return "dados";
      }, 2000),
    );
    await act(async () => vi.advanceTimersByTimeAsync(10));
    falhar = true;
    await act(async () => vi.advanceTimersByTimeAsync(2000));
    expect(result.current.data).toBe("dados");
    expect(result.current.error).toBe("sem resposta");
  });
});
