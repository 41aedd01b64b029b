import { describe, expect, it, vi } from "vitest";
import { firstConfirmed } from "../../src/client.ts";

/** A promise and its two hands. */
function pending() {
  let resolve = () => {};
  let reject = (_: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("a publish sent again on a fresh channel when its confirm is slow (firstConfirmed)", () => {
  it("When the first confirm comes in time, then nothing is sent again", async () => {
    vi.useFakeTimers();
    try {
      const second = vi.fn(async () => {});
      const done = firstConfirmed(Promise.resolve(), second, 1500);
      await expect(done).resolves.toBeUndefined();
      await vi.advanceTimersByTimeAsync(5000);
      expect(second).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("When the first confirm is still missing after the wait, then the message goes again, and the second's confirm is the publish's", async () => {
    vi.useFakeTimers();
    try {
      const first = pending();
      const second = vi.fn(async () => {});
      const done = firstConfirmed(first.promise, second, 1500);
      await vi.advanceTimersByTimeAsync(1499);
      expect(second).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(second).toHaveBeenCalledOnce();
      await expect(done).resolves.toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("When the second fails, then the first decides: its failure is the publish's", async () => {
    vi.useFakeTimers();
    try {
      const first = pending();
      const done = firstConfirmed(
        first.promise,
        async () => {
          throw new Error("channel closed");
        },
        1500,
      );
      const outcome = expect(done).rejects.toThrow("no route");
      await vi.advanceTimersByTimeAsync(2000);
      first.reject(new Error("no route"));
      await outcome;
    } finally {
      vi.useRealTimers();
    }
  });
});
