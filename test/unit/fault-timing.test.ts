import { describe, expect, it } from "vitest";
import { faultTiming } from "../faults/report.ts";

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

  it("When nothing was asked during the fault, then its p99 is 0 over 0 answers", () => {
    expect(faultTiming([{ at: 0, ms: 5, ok: true }], 10, 20)).toEqual({
      longestWithoutAckMs: 10,
      p99Ms: 0,
      answers: 0,
    });
  });
});
