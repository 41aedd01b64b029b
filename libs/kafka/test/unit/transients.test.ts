import { describe, expect, it } from "vitest";
import { expectedCrash, expectedTransient } from "../../src/client.ts";

describe("kafkajs's log entries: expected start-up transients (issue 14)", () => {
  it("When kafkajs logs a broker's error answer that it handles itself, then it is an expected transient", () => {
    for (const error of [
      "Topic creation errors",
      "The group coordinator is not available",
      "The group is rebalancing, so a rejoin is needed",
      "This server does not host this topic-partition",
      // A new topic's ListOffsets sent on metadata from before its leader was known
      // (seen at the clean start on Node 24); kafkajs refreshes the metadata and retries.
      "This server is not the leader for that topic-partition",
      // A group's new coordinator still loading it (issue 33): the patched consumer retries.
      "The coordinator is loading and hence can't process requests for this group",
    ]) {
      expect(expectedTransient("Response CreateTopics(key: 19, version: 3)", error), error).toBe(
        true,
      );
    }
    expect(
      expectedTransient(
        "The coordinator is not aware of this member, re-joining the group",
        undefined,
      ),
    ).toBe(true);
  });

  it("When kafkajs logs anything else, then it stays an error", () => {
    expect(
      expectedTransient(
        "Response Produce(key: 0, version: 7)",
        "The request included a message larger than the max message size the server will accept",
      ),
    ).toBe(false);
    expect(
      expectedTransient("Crash: KafkaJSNumberOfRetriesExceeded: Connection error", undefined),
    ).toBe(false);
    expect(expectedTransient("Topic creation errors", undefined)).toBe(false);
  });

  it("Issue 47: when a consumer crashes because a new Kafka's coordinator is still loading its group, then the crash is expected (kafkajs restarts it); another crash is not", () => {
    expect(
      expectedCrash(
        "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group",
      ),
    ).toBe(true);
    expect(expectedCrash("Crash: KafkaJSNumberOfRetriesExceeded: Connection error")).toBe(false);
    expect(
      expectedCrash("The coordinator is loading and hence can't process requests for this group"),
    ).toBe(false);
  });
});
