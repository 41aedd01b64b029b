import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow test file took in a full `npm test` from a clean clone on this 2-core
 * machine (.ci/run of 2026-11-28 at 05:11, Node 24, Kafka 4.4, the services run built).
 * Vitest runs the longest first only when its cache holds the last run's durations; a
 * clean clone (CI) has none, and the largest file first is not the longest. Files not listed count as quick. Keep the list
 * roughly true; a stale figure only costs some of the time it saves.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log.test.ts": 143,
  "test/faults/event-log-cluster.test.ts": 135,
  "test/integration/lab/failover.test.ts": 112,
  "dlq/test/integration/dlq.test.ts": 87,
  "test/faults/broker.test.ts": 77,
  "test/faults/broker-cluster.test.ts": 68,
  "test/faults/event-log-network.test.ts": 56,
  "web/test/integration/lab-page.test.ts": 54,
  "test/integration/hostile/http-bodies.test.ts": 49,
  "analytics/test/integration/analytics.test.ts": 48,
  "web/test/integration/browser.test.ts": 46,
  "orders-api/test/integration/outbox.test.ts": 43,
  "test/faults/event-log-broker-down.test.ts": 39,
  "test/integration/lab/kafka-down.test.ts": 35,
  "payments/test/integration/one-at-a-time.test.ts": 30,
  "test/faults/scale-out.test.ts": 29,
  "test/integration/secured-connections.test.ts": 28,
  "test/integration/lab/replay.test.ts": 25,
  "test/integration/lab/rebalance.test.ts": 23,
  "payments/test/integration/payments.test.ts": 23,
  "test/integration/lab/scale-out.test.ts": 21,
  "payments/test/integration/let-go.test.ts": 20,
  "orders-api/test/integration/kafka-down.test.ts": 18,
  "test/integration/infra/polite-cli.test.ts": 17,
  "test/integration/lab/broker-course.test.ts": 16,
  "test/integration/infra/kafka.test.ts": 15,
  "payments/test/integration/reread.test.ts": 15,
  "broker/payments/test/integration/payments.test.ts": 14,
  "payments/test/integration/stuck.test.ts": 12,
  "payments/test/integration/group.test.ts": 12,
  "orders-api/test/integration/trace.test.ts": 12,
  "orders-api/test/integration/resultados.test.ts": 12,
  "broker/orders/test/integration/failures.test.ts": 11,
  "test/integration/infra/rabbitmq.test.ts": 10,
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
