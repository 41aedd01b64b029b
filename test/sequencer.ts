import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each test file of 10 s or more took in a full `npm test` from a clean clone on this
 * 2-core machine: the .ci/run of 2026-12-01 at 23:18 (758 s, install included), read from
 * its test-artifacts/file-times.json (test/summary-reporter.ts). A file
 * run in two projects counts at the mean of both. Vitest runs the longest first only when
 * its cache holds the last run's durations; a clean clone (CI) has none, and the largest
 * file first is not the longest. Files not listed count as quick and run last. Keep the
 * list roughly true: a file of 10 s left out ran in the last seconds of its group beside
 * nothing else.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log-cluster.test.ts": 275,
  "test/integration/hostile/http-bodies.test.ts": 240,
  "test/integration/lab/failover.test.ts": 226,
  "test/faults/event-log.test.ts": 225,
  "dlq/test/integration/dlq.test.ts": 199,
  "test/faults/broker-cluster.test.ts": 186,
  "web/test/integration/lab-page.test.ts": 178,
  "web/test/integration/browser.test.ts": 160,
  "test/faults/broker.test.ts": 157,
  "analytics/test/integration/analytics.test.ts": 149,
  "test/integration/infra/polite-cli.test.ts": 100,
  "test/faults/event-log-broker-down.test.ts": 82,
  "orders-api/test/integration/outbox.test.ts": 81,
  "test/integration/lab/kafka-down.test.ts": 79,
  "test/faults/event-log-network.test.ts": 73,
  "test/integration/secured-connections.test.ts": 56,
  "test/faults/scale-out.test.ts": 53,
  "broker/payments/test/integration/payments.test.ts": 50,
  "test/integration/lab/replay.test.ts": 48,
  "test/integration/infra/kafka.test.ts": 48,
  "test/integration/lab/broker-course.test.ts": 42,
  "test/integration/infra/rabbitmq.test.ts": 36,
  "test/integration/lab/scale-out.test.ts": 36,
  "orders-api/test/integration/kafka-down.test.ts": 33,
  "payments/test/integration/one-at-a-time.test.ts": 31,
  "test/integration/lab/rebalance.test.ts": 31,
  "test/integration/infra/architecture.test.ts": 29,
  "web/test/integration/lab-page-broker.test.ts": 25,
  "payments/test/integration/payments.test.ts": 25,
  "test/integration/hostile/messages.test.ts": 23,
  "test/integration/infra/partitioner-parity.test.ts": 22,
  "payments/test/integration/let-go.test.ts": 22,
  "payments/test/integration/reread.test.ts": 20,
  "test/integration/lab/poison.test.ts": 18,
  "test/integration/opentelemetry.test.ts": 13,
  "orders-api/test/integration/trace.test.ts": 12,
  "test/integration/infra/build.test.ts": 12,
  "payments/test/integration/stuck.test.ts": 12,
  "test/integration/infra/hand-started.test.ts": 12,
  "test/integration/infra/infra-cli.test.ts": 12,
  "test/unit/output.test.ts": 12,
  "orders-api/test/integration/resultados.test.ts": 11,
  "payments/test/integration/group.test.ts": 11,
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
