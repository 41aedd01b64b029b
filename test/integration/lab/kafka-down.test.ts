import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- kafka-down (it stops a Kafka broker of its own)", () => {
  it("When Kafka stops under a stream of orders, then both settings answer 500 with the order saved; the outbox publishes and charges them once Kafka returns; OUTBOX=desligado leaves the spec's orphans", async () => {
    await expectPassed("kafka-down", [
      /^PASS com o Kafka fora, todo POST \/pedidos respondeu 500 depois de uns 5 s/,
      /^PASS OUTBOX=ligado: os pedidos salvos durante a queda \(\d+, \d+\) foram publicados quando o Kafka voltou/,
      /^PASS OUTBOX=desligado: os pedidos \d+, \d+ não têm PedidoCriado e ficam AGUARDANDO_PAGAMENTO .* os pedidos órfãos da spec/,
    ]);
  }, 270_000);
});
