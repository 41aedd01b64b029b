import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- broker-course (it stops a RabbitMQ node of its own)", () => {
  it("When the course's eight validation scenarios run against the broker edition, then each passes, checked from the queues and both databases", async () => {
    await expectPassed("broker-course", [
      /^PASS 1\. consumidor parado: 202, o pedido EM_PAGAMENTO, a mensagem Ready/,
      /^PASS 2\. repetição pendente 202, conflito 409, pedido desconhecido 404, formato inválido 400, itens travados 409/,
      /^PASS 3\. uma aprovação entregue duas vezes deu uma decisão guardada e um pedido PAGO/,
      /^PASS 4\. recusa \(ABERTO\), depois aprovação \(PAGO\); a velha recusa repetida/,
      /^PASS 5\. uma reentrega real depois de reiniciar os dois serviços/,
      /^PASS 6\. conteúdo divergente nas duas direções foi para a fila de erros/,
      /^PASS 7\. broker fora: 503 dentro da espera de 5 s citando a chave, o registro mantido PENDENTE/,
      /^PASS 8\. o velho atalho de aprovação acabou/,
    ]);
  }, 270_000);
});
