import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow test file took in a full `npm test` from a clean clone on this 2-core
 * machine (.ci/run of 2026-11-28 at 02:04, Node 24, Kafka 4.4; the fault files split since
 * then are weighed by the scenarios they took along). Vitest runs the longest first only
 * when its cache holds the last run's durations; a clean clone (CI) has none, and the
 * largest file first is not the longest. Files not listed count as quick. Keep the list
 * roughly true; a stale figure only costs some of the time it saves.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log.test.ts": 133,
  "test/integration/lab/failover.test.ts": 109,
  "test/faults/event-log-cluster.test.ts": 104,
  "test/faults/broker-cluster.test.ts": 65,
  "test/faults/broker.test.ts": 60,
  "dlq/test/integration/dlq.test.ts": 60,
  "test/faults/event-log-network.test.ts": 56,
  "web/test/integration/lab-page.test.ts": 43,
  "test/integration/lab/kafka-down.test.ts": 43,
  "orders-api/test/integration/outbox.test.ts": 43,
  "test/integration/hostile/http-bodies.test.ts": 42,
  "test/faults/event-log-broker-down.test.ts": 40,
  "analytics/test/integration/analytics.test.ts": 36,
  "web/test/integration/browser.test.ts": 31,
  "test/integration/secured-connections.test.ts": 30,
  "payments/test/integration/one-at-a-time.test.ts": 30,
  "test/integration/lab/replay.test.ts": 27,
  "test/faults/scale-out.test.ts": 26,
  "test/integration/lab/rebalance.test.ts": 22,
  "test/integration/lab/broker-course.test.ts": 22,
  "payments/test/integration/payments.test.ts": 22,
  "orders-api/test/integration/kafka-down.test.ts": 21,
  "payments/test/integration/let-go.test.ts": 20,
  "test/integration/lab/scale-out.test.ts": 20,
  "test/integration/infra/polite-cli.test.ts": 17,
  "broker/payments/test/integration/payments.test.ts": 16,
  "payments/test/integration/reread.test.ts": 15,
  "payments/test/integration/stuck.test.ts": 12,
  "payments/test/integration/group.test.ts": 12,
  "orders-api/test/integration/trace.test.ts": 11,
  "orders-api/test/integration/resultados.test.ts": 11,
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
