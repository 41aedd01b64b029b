import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- failover", () => {
  it("Issue 33: when the leader of a 3-node Kafka cluster and then of a 3-node RabbitMQ cluster is killed under a stream of requests, then nothing is lost or doubled and no client waits 5 s", async () => {
    await expectPassed(
      "failover",
      [
        /^PASS Kafka, lost: \d+ orders acknowledged, 0 never decided/,
        /^PASS Kafka, doubled: each order's result applied once/,
        /^PASS Kafka, longest wait: \d\.\d s without an acknowledged order/,
        /^PASS RabbitMQ, lost: \d+ payment requests accepted, 0 never concluded/,
        /^PASS RabbitMQ, doubled: each request decided once/,
        /^PASS RabbitMQ, longest wait: \d\.\d s without an accepted request/,
      ],
      {},
      // Two clusters of three to start and stop: about 95 s alone, up to 3 minutes beside
      // the other integration files.
      180_000,
    );
  }, 240_000);
});
