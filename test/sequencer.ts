import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each test file of 5 s or more took in a full `npm test` from a clean clone on this
 * 2-core machine: the mean of two .ci/run runs of 2026-11-28 at 20:14 and 20:24 (Node 24,
 * Kafka 4.4, the services run built, the integration group four files at a time), a file
 * run in two projects at its longer time. Vitest runs the longest first only when its cache
 * holds the last run's durations; a clean clone (CI) has none, and the largest file first is
 * not the longest. Files not listed count as quick and run last. Keep the list roughly true:
 * a file of 10 s left out ran in the last seconds of its group beside nothing else.
 */
export const SECONDS: Record<string, number> = {
  "test/faults/event-log-cluster.test.ts": 136,
  "test/faults/event-log.test.ts": 130,
  "web/test/integration/lab-page.test.ts": 98,
  "test/integration/lab/failover.test.ts": 96,
  "test/faults/broker-cluster.test.ts": 72,
  "test/integration/hostile/http-bodies.test.ts": 72,
  "test/faults/broker.test.ts": 52,
  "dlq/test/integration/dlq.test.ts": 51,
  "test/faults/event-log-network.test.ts": 49,
  "web/test/integration/browser.test.ts": 45,
  "analytics/test/integration/analytics.test.ts": 44,
  "orders-api/test/integration/outbox.test.ts": 35,
  "test/faults/event-log-broker-down.test.ts": 35,
  "test/integration/lab/kafka-down.test.ts": 34,
  "payments/test/integration/one-at-a-time.test.ts": 28,
  "test/faults/scale-out.test.ts": 27,
  "test/integration/lab/replay.test.ts": 26,
  "test/integration/secured-connections.test.ts": 24,
  "payments/test/integration/payments.test.ts": 23,
  "web/test/integration/lab-page-broker.test.ts": 22,
  "orders-api/test/integration/kafka-down.test.ts": 21,
  "test/integration/lab/rebalance.test.ts": 20,
  "payments/test/integration/let-go.test.ts": 19,
  "test/integration/infra/polite-cli.test.ts": 18,
  "test/integration/lab/scale-out.test.ts": 18,
  "payments/test/integration/reread.test.ts": 16,
  "test/integration/lab/broker-course.test.ts": 16,
  "broker/payments/test/integration/payments.test.ts": 15,
  "test/integration/infra/kafka.test.ts": 15,
  "orders-api/test/integration/resultados.test.ts": 12,
  "payments/test/integration/stuck.test.ts": 12,
  "orders-api/test/integration/trace.test.ts": 11,
  "broker/orders/test/integration/failures.test.ts": 10,
  "test/integration/opentelemetry.test.ts": 10,
  "test/unit/output.test.ts": 10,
  "payments/test/integration/group.test.ts": 9,
  "test/integration/infra/infra-cli.test.ts": 9,
  "test/integration/hostile/messages.test.ts": 8,
  "orders-api/test/integration/pedidos.test.ts": 7,
  "test/integration/lab/poison.test.ts": 7,
  "contracts/test/unit/fast-path.test.ts": 6,
  "payments/test/integration/commit.test.ts": 6,
  "libs/service/test/unit/output.test.ts": 5,
  "test/integration/infra/build.test.ts": 5,
  "test/integration/infra/code-tour.test.ts": 5,
  "test/integration/infra/partitioner-parity.test.ts": 5,
  "test/integration/infra/rabbitmq.test.ts": 5,
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
