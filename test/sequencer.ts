import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each test file of 4 s or more took in a full `npm test` from a clean clone on this
 * 2-core machine: the mean of three green .ci/run of 2026-12-07 (276-277 s, install
 * included), read from their test-artifacts/file-times.json (test/summary-reporter.ts). A
 * file run in two projects counts at the mean of both. Vitest runs the longest first only
 * when its cache holds the last run's durations; a clean clone (CI) has none, and the
 * largest file first is not the longest. Files not listed count as quick and run last. Keep
 * the list roughly true: a long file left out runs in the last seconds of its group beside
 * nothing else. (The list of 2026-12-01 had the hostile bodies at 240 s and the polite CLIs
 * at 100 s, which had come down to 31 s and 19 s.)
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log.test.ts": 98,
  "test/faults/event-log-cluster.test.ts": 96,
  "web/test/integration/lab-page.test.ts": 81,
  "test/integration/lab/failover.test.ts": 68,
  "test/faults/broker-cluster.test.ts": 53,
  "dlq/test/integration/dlq.test.ts": 52,
  "web/test/integration/browser.test.ts": 48,
  "test/faults/event-log-broker-down.test.ts": 43,
  "test/faults/broker.test.ts": 40,
  "test/faults/event-log-network.test.ts": 40,
  "analytics/test/integration/analytics.test.ts": 37,
  "test/integration/hostile/http-bodies.test.ts": 31,
  "test/integration/lab/kafka-down.test.ts": 30,
  "orders-api/test/integration/outbox.test.ts": 28,
  "payments/test/integration/one-at-a-time.test.ts": 27,
  "test/integration/lab/replay.test.ts": 25,
  "test/faults/scale-out.test.ts": 23,
  "payments/test/integration/payments.test.ts": 22,
  "test/integration/infra/polite-cli.test.ts": 19,
  "test/integration/secured-connections.test.ts": 19,
  "orders-api/test/integration/kafka-down.test.ts": 16,
  "payments/test/integration/reread.test.ts": 13,
  "test/integration/lab/rebalance.test.ts": 12,
  "orders-api/test/integration/resultados.test.ts": 11,
  "orders-api/test/integration/trace.test.ts": 11,
  "payments/test/integration/stuck.test.ts": 11,
  "broker/payments/test/integration/payments.test.ts": 10,
  "test/integration/infra/kafka.test.ts": 10,
  "broker/orders/test/integration/failures.test.ts": 8,
  "test/integration/lab/broker-course.test.ts": 8,
  "web/test/integration/lab-page-broker.test.ts": 8,
  "payments/test/integration/let-go.test.ts": 7,
  "test/integration/opentelemetry.test.ts": 7,
  "orders-api/test/integration/pedidos.test.ts": 6,
  "payments/test/integration/group.test.ts": 6,
  "test/integration/infra/rabbitmq.test.ts": 6,
  "test/integration/lab/scale-out.test.ts": 6,
  "test/integration/infra/code-tour.test.ts": 5,
  "test/unit/output.test.ts": 5,
  "broker/orders/test/integration/flow.test.ts": 4,
  "test/integration/hostile/messages.test.ts": 4,
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
