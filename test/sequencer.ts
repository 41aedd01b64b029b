import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow test file took in a full `npm test` on this 2-core machine (the
 * vitest run of 2026-11-27 at 00:14, Node 24, Kafka 4.4, three integration files at a
 * time). Vitest runs the longest first only when its
 * cache holds the last run's durations; a clean clone (CI) has none, and the largest file
 * first is not the longest: the fault project started broker.test.ts (166 s) before
 * event-log.test.ts (237 s) and ended a minute after the best pairing. Files not listed
 * count as quick. Keep the list roughly true; a stale figure only costs some of the time
 * it saves.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log.test.ts": 219,
  "test/integration/lab/failover.test.ts": 126,
  "test/faults/event-log-cluster.test.ts": 110,
  "test/faults/broker.test.ts": 110,
  "orders-api/test/integration/outbox.test.ts": 74,
  "test/integration/lab/kafka-down.test.ts": 65,
  "test/faults/event-log-network.test.ts": 50,
  "dlq/test/integration/dlq.test.ts": 44,
  "analytics/test/integration/analytics.test.ts": 37,
  "test/integration/lab/replay.test.ts": 32,
  "test/faults/scale-out.test.ts": 31,
  "web/test/integration/browser.test.ts": 30,
  "test/integration/hostile/http-bodies.test.ts": 30,
  // Issue 47's lab on the page (2026-11-27, a run of its own: 46–65 s with a Kafka of its own).
  "web/test/integration/lab-page.test.ts": 55,
  "test/integration/lab/broker-course.test.ts": 30,
  "orders-api/test/integration/kafka-down.test.ts": 29,
  "test/integration/infra/polite-cli.test.ts": 29,
  "payments/test/integration/one-at-a-time.test.ts": 27,
  "test/integration/lab/scale-out.test.ts": 26,
  "test/integration/infra/kafka.test.ts": 24,
  "test/integration/lab/rebalance.test.ts": 24,
  "broker/payments/test/integration/payments.test.ts": 19,
  "test/integration/secured-connections.test.ts": 18,
  "payments/test/integration/reread.test.ts": 17,
  "payments/test/integration/payments.test.ts": 17,
  "test/integration/infra/infra-cli.test.ts": 15,
  "payments/test/integration/stuck.test.ts": 11,
  "payments/test/integration/group.test.ts": 11,
  "orders-api/test/integration/trace.test.ts": 11,
  "test/integration/opentelemetry.test.ts": 10,
  "broker/orders/test/integration/failures.test.ts": 10,
};

/**
 * Longest first, from SECONDS, within each group of projects (vitest keeps the groups'
 * order): two workers then finish together instead of one waiting on a long file started
 * last. Files of the same weight keep vitest's own order.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification) => SECONDS[relative(root, f.moduleId)] ?? 0;
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}
