import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each test file of 10 s or more took in a full `npm test` from a clean clone on this
 * 2-core machine: the mean of two .ci/run runs of 2026-11-29 at 07:22 and 07:38, read from
 * their test-artifacts/file-times.json (test/summary-reporter.ts), on a machine about half as
 * fast as that morning's earlier one (the seconds about twice, the order the same). A file
 * run in two projects counts at the mean of both. Vitest runs the longest first only when
 * its cache holds the last run's durations; a clean clone (CI) has none, and the largest
 * file first is not the longest. Files not listed count as quick and run last. Keep the
 * list roughly true: a file of 10 s left out ran in the last seconds of its group beside
 * nothing else.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log-cluster.test.ts": 228,
  "test/integration/hostile/http-bodies.test.ts": 212,
  "test/integration/lab/failover.test.ts": 205,
  "test/faults/event-log.test.ts": 200,
  "test/faults/broker-cluster.test.ts": 155,
  "web/test/integration/lab-page.test.ts": 153,
  "dlq/test/integration/dlq.test.ts": 128,
  "test/faults/broker.test.ts": 118,
  "analytics/test/integration/analytics.test.ts": 101,
  "web/test/integration/browser.test.ts": 95,
  "test/faults/event-log-network.test.ts": 76,
  "orders-api/test/integration/outbox.test.ts": 70,
  "test/faults/event-log-broker-down.test.ts": 69,
  "test/integration/lab/kafka-down.test.ts": 69,
  "test/integration/infra/polite-cli.test.ts": 63,
  "test/integration/secured-connections.test.ts": 47,
  "test/integration/lab/replay.test.ts": 45,
  "test/integration/infra/kafka.test.ts": 44,
  "broker/payments/test/integration/payments.test.ts": 35,
  "test/faults/scale-out.test.ts": 35,
  "test/integration/lab/broker-course.test.ts": 34,
  "payments/test/integration/one-at-a-time.test.ts": 31,
  "test/integration/lab/scale-out.test.ts": 29,
  "test/integration/lab/rebalance.test.ts": 28,
  "orders-api/test/integration/kafka-down.test.ts": 26,
  "payments/test/integration/payments.test.ts": 25,
  "test/integration/infra/infra-cli.test.ts": 25,
  "payments/test/integration/let-go.test.ts": 22,
  "web/test/integration/lab-page-broker.test.ts": 20,
  "test/integration/infra/rabbitmq.test.ts": 19,
  "test/integration/infra/architecture.test.ts": 18,
  "test/integration/infra/partitioner-parity.test.ts": 18,
  "payments/test/integration/reread.test.ts": 16,
  "test/integration/hostile/messages.test.ts": 15,
  "test/integration/lab/poison.test.ts": 15,
  "test/integration/infra/build.test.ts": 14,
  "orders-api/test/integration/resultados.test.ts": 13,
  "broker/orders/test/integration/failures.test.ts": 12,
  "orders-api/test/integration/trace.test.ts": 12,
  "payments/test/integration/group.test.ts": 12,
  "payments/test/integration/stuck.test.ts": 12,
  "test/integration/opentelemetry.test.ts": 12,
  "test/unit/output.test.ts": 11,
  "payments/test/integration/commit.test.ts": 10,
  "test/integration/infra/hand-started.test.ts": 10,
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
