import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConsumerEvents, createLogger } from "@shop/service";
import type { KafkaMessage } from "kafkajs";
import { describe, expect, it, vi } from "vitest";
import { beatingWhile } from "../../src/consumer/batch.ts";
import { memberIdentityFile } from "../../src/consumer/member.ts";
import { BatchOffsets } from "../../src/consumer/offsets.ts";
import { RebalanceNotice } from "../../src/consumer/rebalance.ts";
import { StuckPartitions } from "../../src/consumer/stuck.ts";
import { Turns } from "../../src/consumer/turns.ts";

const quiet = createLogger("test", () => {});
const message = (offset: string) => ({ offset }) as KafkaMessage;

describe("the consumer's offsets of one batch", () => {
  it("When pipelined records finish out of order, then offsets are resolved in order, each once its record and every earlier one are done", async () => {
    const resolved: string[] = [];
    const events = new ConsumerEvents();
    const acked: string[] = [];
    events.on("acked", (e) => acked.push(e.where));
    const offsets = new BatchOffsets(
      "t",
      0,
      { resolveOffset: (o) => resolved.push(o) },
      null,
      events,
    );
    let finishFirst = () => {};
    const first = new Promise<void>((r) => {
      finishFirst = r;
    });
    offsets.add("10", first);
    offsets.add("11", undefined); // done at once, but after a record still running
    offsets.add("12", Promise.resolve());
    await Promise.resolve();
    expect(resolved).toEqual([]);
    finishFirst();
    await offsets.settle();
    expect(resolved).toEqual(["10", "11", "12"]);
    expect(acked).toEqual(["t[0]@10", "t[0]@11", "t[0]@12"]);
  });

  it("When a transaction commits, then the next offset is committed with it and only then resolved", async () => {
    const resolved: string[] = [];
    const committed: string[] = [];
    const tx = {
      send: async () => {},
      commit: async (next: string) => {
        committed.push(next);
      },
      abort: async () => {},
    };
    const offsets = new BatchOffsets(
      "t",
      1,
      { resolveOffset: (o) => resolved.push(o) },
      tx,
      new ConsumerEvents(),
    );
    offsets.add("5", undefined);
    offsets.add("6", undefined);
    expect(resolved).toEqual([]);
    await offsets.commitTransaction(tx);
    expect(committed).toEqual(["7"]);
    expect(resolved).toEqual(["6"]);
  });
});

describe("the stuck-partition policy", () => {
  const alive = { isRunning: () => true, isStale: () => false, heartbeat: async () => {} };

  it("When a record fails twice and then succeeds, then the partition is reported stuck meanwhile and cleared after", async () => {
    const events = new ConsumerEvents();
    const retried: number[] = [];
    events.on("retried", (e) => retried.push(e.attempt));
    const stuck = new StuckPartitions(events, quiet);
    let calls = 0;
    const seenStuck: number[] = [];
    const r = await stuck.untilDone(
      "t",
      2,
      message("40"),
      alive,
      async () => {
        seenStuck.push(stuck.list().length);
        if (++calls < 3) throw new Error(`failure ${calls}`);
        return "done";
      },
      false,
    );
    expect(r).toBe("done");
    expect(retried).toEqual([1, 2]);
    expect(seenStuck).toEqual([0, 1, 1]);
    expect(stuck.size).toBe(0);
  });

  it("When the batch goes stale while the record waits, then it gives up with null and the partition is no longer stuck", async () => {
    const stuck = new StuckPartitions(new ConsumerEvents(), quiet);
    let stale = false;
    const batch = { ...alive, isStale: () => stale };
    const r = await stuck.untilDone(
      "t",
      0,
      message("1"),
      batch,
      async () => {
        stale = true;
        throw new Error("down");
      },
      false,
    );
    expect(r).toBeNull();
    expect(stuck.size).toBe(0);
  });

  it("When in a transaction, then the first error goes to the batch (to abort and read again)", async () => {
    const stuck = new StuckPartitions(new ConsumerEvents(), quiet);
    await expect(
      stuck.untilDone(
        "t",
        0,
        message("1"),
        alive,
        async () => {
          throw new Error("fenced");
        },
        true,
      ),
    ).rejects.toThrow("fenced");
  });
});

describe("the member's heartbeat while a record is handled (beatingWhile)", () => {
  it("When a record takes 3 s, then the group hears from the member every second meanwhile, an error that is no rebalance is left to the heartbeat after the record, and none is sent once it is done", async () => {
    vi.useFakeTimers();
    try {
      let beats = 0;
      const heartbeat = async () => {
        beats++;
        if (beats === 2) throw new Error("Connection error");
      };
      let finish = (_: string) => {};
      const record = new Promise<string>((r) => {
        finish = r;
      });
      const rebalance = new RebalanceNotice().current();
      const done = beatingWhile(heartbeat, rebalance, () => record, 1000);
      await vi.advanceTimersByTimeAsync(3000);
      expect(beats).toBe(3);
      expect(rebalance.signal.aborted).toBe(false);
      finish("decided");
      await expect(done).resolves.toBe("decided");
      await vi.advanceTimersByTimeAsync(5000);
      expect(beats).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it("When the coordinator answers that the group is rebalancing, then the record's signal is aborted with that answer within the second", async () => {
    vi.useFakeTimers();
    try {
      const rebalancing = Object.assign(new Error("The group is rebalancing"), {
        type: "REBALANCE_IN_PROGRESS",
      });
      const rebalance = new RebalanceNotice().current();
      const record = new Promise<string>((_, reject) =>
        rebalance.signal.addEventListener("abort", () => reject(new Error("let go"))),
      );
      const done = beatingWhile(
        async () => {
          throw rebalancing;
        },
        rebalance,
        () => record,
        1000,
      );
      const outcome = expect(done).rejects.toThrow("let go");
      await vi.advanceTimersByTimeAsync(1000);
      await outcome;
      expect(rebalance.signal.reason).toBe(rebalancing);
    } finally {
      vi.useRealTimers();
    }
  });

  it("Issue 55: when one of the member's batches hears of the rebalance and kafkajs answers the other's heartbeat without asking, then the record in the other's hands is let go too, and once the member joined again a new notice is clear", async () => {
    vi.useFakeTimers();
    try {
      const rebalancing = Object.assign(new Error("The group is rebalancing"), {
        type: "REBALANCE_IN_PROGRESS",
      });
      const notice = new RebalanceNotice();
      const rebalance = notice.current();
      const { signal } = rebalance;
      // kafkajs sends one heartbeat request an interval for the whole member: the batch
      // waiting for its turn asks first and hears the answer; the one handling a record is
      // answered "done" without a request.
      let asked = 0;
      const waitingBatch = async () => {
        asked++;
        throw rebalancing;
      };
      const handlingBatch = async () => {};
      const untilLetGo = () =>
        new Promise<string>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        );
      const waiting = beatingWhile(waitingBatch, rebalance, untilLetGo, 500);
      const handling = beatingWhile(handlingBatch, rebalance, untilLetGo, 500);
      const outcomes = Promise.allSettled([waiting, handling]);
      await vi.advanceTimersByTimeAsync(500);
      const [a, b] = await outcomes;
      expect(asked).toBe(1);
      expect(a).toEqual({ status: "rejected", reason: rebalancing });
      expect(b).toEqual({ status: "rejected", reason: rebalancing });
      // A heartbeat of the old generation answered late aborts nothing of the new one.
      notice.joined();
      rebalance.heard(rebalancing);
      expect(notice.current().signal.aborted).toBe(false);
      expect(signal.aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("Rule E6, issue 55: the member's partitions take turns, the oldest record first (Turns)", () => {
  /**
   * Each partition's batch as eachBatchOf runs it: before each record, that record's turn
   * is asked for, then the one held is given back; the handling takes a few event-loop
   * turns. Returns the records' timestamps in the order they were handled.
   */
  async function handleAll(turns: Turns, partitions: number[][], busy = { now: 0, most: 0 }) {
    const handled: number[] = [];
    await Promise.all(
      partitions.map(async (records) => {
        let holding = false;
        for (const at of records) {
          const turn = turns.take(at);
          if (holding) turns.release();
          await turn;
          holding = true;
          busy.now++;
          busy.most = Math.max(busy.most, busy.now);
          handled.push(at);
          await new Promise((r) => setTimeout(r, 2));
          busy.now--;
        }
        if (holding) turns.release();
      }),
    );
    return handled;
  }

  it("When three partitions' batches arrive together for one turn, then their records are handled oldest first, each partition in its own order", async () => {
    const handled = await handleAll(new Turns(1), [
      [10, 40, 70],
      [20, 50],
      [5, 30, 90],
    ]);
    expect(handled).toEqual([5, 10, 20, 30, 40, 50, 70, 90]);
  });

  it("When two turns are allowed, then two records are handled at a time, never more", async () => {
    const busy = { now: 0, most: 0 };
    const handled = await handleAll(
      new Turns(2),
      [
        [1, 4],
        [2, 5],
        [3, 6],
      ],
      busy,
    );
    expect(busy.most).toBe(2);
    expect([...handled].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("When a waiting record's signal is aborted (a rebalance), then it rejects with the reason and the turn goes to the next record", async () => {
    const turns = new Turns(1);
    await turns.take(1);
    const rebalance = new AbortController();
    const letGo = turns.take(2, rebalance.signal);
    const next = turns.take(3);
    expect(turns.olderWaiting(3)).toBe(true);
    rebalance.abort(new Error("REBALANCE_IN_PROGRESS"));
    await expect(letGo).rejects.toThrow("REBALANCE_IN_PROGRESS");
    expect(turns.olderWaiting(3)).toBe(false);
    turns.release();
    await next;
  });
});

describe("a consumer's member id kept across its process's restarts (memberIdentityFile)", () => {
  it("When a member id is saved, then the next process loads it; once the member left (null), none is loaded", () => {
    const path = join(mkdtempSync(join(tmpdir(), "member-")), "pedidos.db.kafka-member");
    const identity = memberIdentityFile(path);
    expect(identity.load()).toBeNull();
    identity.save("orders-api-1a2b");
    expect(memberIdentityFile(path).load()).toBe("orders-api-1a2b");
    identity.save(null);
    expect(memberIdentityFile(path).load()).toBeNull();
  });
});
