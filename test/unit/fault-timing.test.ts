import { describe, expect, it } from "vitest";
import { faultProgress, faultTiming, recovery, scenarioRecovery } from "../faults/report.ts";

describe("What a client felt during a fault (faultTiming)", () => {
  it("When acknowledgements stop at the fault and resume after it, then the longest gap runs from the fault to the first acknowledgement after its end", () => {
    const answers = [
      { at: 0, ms: 10, ok: true },
      { at: 100, ms: 5000, ok: false }, // asked during the fault: a 500 after the 5 s wait
      { at: 200, ms: 50, ok: false },
      { at: 5200, ms: 100, ok: true }, // the first yes after the fault's end (5000)
      { at: 6000, ms: 10, ok: true },
    ];
    const t = faultTiming(answers, 90, 5000);
    expect(t.longestWithoutAckMs).toBe(5300 - 90);
    expect(t.answers).toBe(2);
    expect(t.p99Ms).toBe(5000);
  });

  it("When nothing was asked during the fault, then the client waited for nothing: 0 without an acknowledgement, and a p99 of 0 over 0 answers", () => {
    expect(faultTiming([{ at: 0, ms: 5, ok: true }], 10, 20)).toEqual({
      longestWithoutAckMs: 0,
      p99Ms: 0,
      answers: 0,
    });
  });

  it("When the client stops asking before the fault ends, then the gap is counted up to its last answer, not to the fault's end", () => {
    const answers = [
      { at: 0, ms: 10, ok: true },
      { at: 1000, ms: 300, ok: true }, // the last request, answered at 1300
    ];
    // The fault (a controller's election, say) ended at 9000, long after the last request.
    expect(faultTiming(answers, 500, 9000).longestWithoutAckMs).toBe(1300 - 500);
    // A last request left waiting until after the fault's end still counts whole.
    const slow = [...answers, { at: 1200, ms: 9000, ok: true }];
    expect(faultTiming(slow, 500, 9000).longestWithoutAckMs).toBe(10_200 - 1300);
  });
});

describe("How the orders placed during a fault went on (faultProgress)", () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it("When orders were placed from the fault on, then the slowest saved-to-decided wait is over them only, and an undecided one waits for ever", () => {
    const pedidos = [
      { id: 1, criado_em: at(0), decidido_em: at(9_000) }, // before the fault: not counted
      { id: 2, criado_em: at(1_000), decidido_em: at(4_500) },
      { id: 3, criado_em: at(2_000), decidido_em: at(3_000) },
    ];
    const p = faultProgress(pedidos, new Map(), 1_000);
    expect(p).toEqual({ longestOrderWaitMs: 3_500, mostDecisions: 0, orders: 2 });
    const open = [...pedidos, { id: 4, criado_em: at(2_500), decidido_em: null }];
    expect(faultProgress(open, new Map(), 1_000).longestOrderWaitMs).toBe(Number.POSITIVE_INFINITY);
  });

  it("When an order in flight at the fault was decided three times, then mostDecisions says 3, though it was placed before", () => {
    const pedidos = [
      { id: 1, criado_em: at(0), decidido_em: at(500) },
      { id: 2, criado_em: at(2_000), decidido_em: at(2_500) },
    ];
    const decisions = new Map([
      [1, 3],
      [2, 1],
    ]);
    expect(faultProgress(pedidos, decisions, 1_000).mostDecisions).toBe(3);
  });
});

describe("How soon the shop moved again, and how long its backlog took (recovery)", () => {
  it("When requests wait at the fault's end, then the time to resume runs to the first made final after it, and the drain to the last of those waiting", () => {
    const r = recovery(
      [
        { madeAt: 0, finalAt: 500 }, // final before the end (1000): neither backlog nor resume
        { madeAt: 600, finalAt: 1800 }, // waiting at the end: the first final after it
        { madeAt: 700, finalAt: 2600 }, // waiting at the end: the last of the backlog
        { madeAt: 1500, finalAt: 3000 }, // made after the end: not backlog
      ],
      1000,
      { decisionMs: 300, instances: 1 },
      "Kafka back",
    );
    expect(r).toEqual({
      end: "Kafka back",
      resumeMs: 800,
      backlog: 2,
      drainMs: 1600,
      drainBoundMs: 2 * 300 + 3000,
    });
  });

  it("When a request of the backlog never became final, then the drain never ended; with no request final after the end there is no time to resume", () => {
    const r = recovery(
      [{ madeAt: 0, finalAt: null }],
      1000,
      { decisionMs: 100, instances: 2 },
      "x",
    );
    expect(r.resumeMs).toBeNull();
    expect(r.drainMs).toBe(Number.POSITIVE_INFINITY);
    expect(r.drainBoundMs).toBe(100 + 3000);
  });

  it("When nothing waited at the fault's end, then there is no backlog to drain", () => {
    const r = recovery([{ madeAt: 0, finalAt: 10 }], 1000, { decisionMs: 100, instances: 1 }, "x");
    expect(r).toMatchObject({ backlog: 0, drainMs: 0, resumeMs: null });
  });
});

describe("A scenario's row and its recovery (scenarioRecovery)", () => {
  it("When a row names its own end (a node killed in a cluster), then the resume counts from it, not from the heal, and the row keeps only its names", () => {
    const requests = [{ madeAt: 0, finalAt: 1500 }];
    const rate = { decisionMs: 100, instances: 1 };
    const row = { scenario: "s", fault: "f", end: "the kill", endedAt: 1000 };
    const { names, recovery: r } = scenarioRecovery(row, 9000, requests, rate);
    expect(names).toEqual({ scenario: "s", fault: "f" });
    expect(r).toMatchObject({ end: "the kill", resumeMs: 500 });
    const healed = scenarioRecovery({ scenario: "s", fault: "f" }, 1200, requests, rate);
    expect(healed.recovery).toMatchObject({ end: "the fault's end", resumeMs: 300 });
  });
});
