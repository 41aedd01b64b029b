import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- failover", () => {
  it("Issue 33: when the leader of a 3-node Kafka cluster and then of a 3-node RabbitMQ cluster is killed under a stream of requests, then nothing is lost or doubled and no client waits 5 s", async () => {
    const r = await expectPassed(
      "failover",
      [
        /^PASS Kafka, perdidos: \d+ pedidos confirmados, 0 nunca decididos/,
        /^PASS Kafka, em dobro: o resultado de cada pedido aplicado uma vez/,
        /^PASS Kafka, maior espera: \d\.\d s sem um pedido confirmado/,
        /^PASS RabbitMQ, perdidos: \d+ solicitações de pagamento aceitas, 0 nunca concluídas/,
        /^PASS RabbitMQ, em dobro: cada solicitação decidida uma vez/,
        /^PASS RabbitMQ, maior espera: \d\.\d s sem uma solicitação aceita/,
      ],
      {},
      // Two clusters of three to start and stop: about 95 s alone on a quiet machine, and
      // 160 s alone, 210-240 s beside the other integration files, on this one on
      // 2026-11-26 (d939df8 too); over 300 s on the machine of 2026-11-27, which ran the
      // suite 2.3 times slower. The bound only catches a run that hangs: what the lab
      // promises (nothing lost or doubled, no wait past 5 s) is asserted above.
      580_000,
    );
    // Issue 55 reads each longest wait against 80% of the 5 s goal (4 s): printed for the
    // run's record, not asserted, since 2.6-3.7 s were read in six runs (a 4 s bound would
    // be the flaky one the issue asks not to have; the goal itself is asserted above).
    for (const edition of ["Kafka", "RabbitMQ"]) {
      const line = r.pass.find((l) => l.startsWith(`PASS ${edition}, maior espera`)) ?? "";
      console.log(`failover, ${edition}: ${line.match(/maior espera: \d\.\d s/)?.[0]}`);
    }
  }, 600_000);
});
