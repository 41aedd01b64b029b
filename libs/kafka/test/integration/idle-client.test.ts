import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { testKafka } from "../../../../test/helpers/kafka.ts";

/**
 * kafkajs 2.2.4 armed a timer of (-1 - Date.now()) ms after every response when nothing was
 * pending: Node runs it after 1 ms, and it re-armed itself, a 1 ms loop per connection for
 * the client's life (about 20 ms of CPU a second each, idle), and on Node 24 a
 * TimeoutNegativeWarning. patches/kafkajs+2.2.4.patch (applied by patch-package at
 * install) stops it where it starts, in RequestQueue.scheduleCheckPendingRequests.
 */
describe("kafkajs, patched: an idle client arms no timer", () => {
  it("When a connected client has nothing pending, then no check of its request queue is scheduled and Node warns of no negative timeout", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    const RequestQueue = createRequire(import.meta.url)(
      "kafkajs/src/network/requestQueue/index.js",
    ) as { prototype: { scheduleCheckPendingRequests(): void } };
    const scheduled: unknown[] = [];
    const original = RequestQueue.prototype.scheduleCheckPendingRequests;
    RequestQueue.prototype.scheduleCheckPendingRequests = function (this: {
      throttleCheckTimeoutId: unknown;
    }) {
      original.call(this);
      scheduled.push(this.throttleCheckTimeoutId);
    };
    const admin = testKafka().admin();
    try {
      await admin.connect();
      await admin.listTopics();
      await admin.describeCluster();
      await new Promise((r) => setTimeout(r, 50));
      // Responses did come back, each asking whether to schedule a check...
      expect(scheduled.length).toBeGreaterThan(0);
      // ...and none armed a timer: nothing was pending and nothing throttled.
      expect(scheduled.filter((id) => id != null)).toEqual([]);
      expect(warnings).not.toContain("TimeoutNegativeWarning");
    } finally {
      RequestQueue.prototype.scheduleCheckPendingRequests = original;
      process.off("warning", onWarning);
      await admin.disconnect();
    }
  });
});
