import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- kafka-down (it stops a Kafka broker of its own)", () => {
  it("When Kafka stops under a stream of orders, then both settings answer 500 with the order saved; the outbox publishes and charges them once Kafka returns; OUTBOX=desligado leaves the spec's orphans", async () => {
    await expectPassed("kafka-down", [
      /^PASS with Kafka down, every POST \/pedidos answered 500 after about 5 s/,
      /^PASS OUTBOX=ligado: the orders saved during the outage \(\d+, \d+\) were published once Kafka returned/,
      /^PASS OUTBOX=desligado: orders \d+, \d+ have no PedidoCriado and stay AGUARDANDO_PAGAMENTO .* the spec's orphan orders/,
    ]);
  }, 270_000);
});
