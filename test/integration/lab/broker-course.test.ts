import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- broker-course (it stops a RabbitMQ node of its own)", () => {
  it("When the course's eight validation scenarios run against the broker edition, then each passes, checked from the queues and both databases", async () => {
    await expectPassed("broker-course", [
      /^PASS 1\. consumer stopped: 202, the order EM_PAGAMENTO, the message Ready/,
      /^PASS 2\. pending repeat 202, conflict 409, unknown order 404, bad format 400, items locked 409/,
      /^PASS 3\. an approval delivered twice gave one stored decision and a PAGO order/,
      /^PASS 4\. refusal \(ABERTO\), then approval \(PAGO\); the old refusal replayed/,
      /^PASS 5\. a real redelivery after restarting both services/,
      /^PASS 6\. divergent content in either direction was dead-lettered/,
      /^PASS 7\. broker down: 503 within the 5 s wait naming the key, the record kept PENDENTE/,
      /^PASS 8\. the old approval shortcut is gone/,
    ]);
  }, 270_000);
});
