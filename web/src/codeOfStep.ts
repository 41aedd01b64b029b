/**
 * The code that did each step of a timeline (file and function), so that a learner goes
 * from what they saw on the page to the code that did it. Held to the code by
 * test/unit/code-of-step.test.ts: each function must be defined in its file, and every step
 * the services write must be here.
 */
export interface CodeRef {
  file: string;
  fn: string;
}

/** The event-log edition: GET /pedidos/{id}/historico's steps. */
export const EVENT_LOG_STEPS: Record<string, CodeRef[]> = {
  criado: [
    { file: "orders-api/src/pedidos.ts", fn: "createPedido" },
    { file: "orders-api/src/domain/pedido.ts", fn: "newPedido" },
  ],
  "evento-confirmado": [
    { file: "orders-api/src/messaging/outbox-relay.ts", fn: "sendRound" },
    { file: "orders-api/src/messaging/pedido-criado.ts", fn: "pedidoCriadoRecord" },
  ],
  "evento-posto-de-lado": [
    { file: "orders-api/src/messaging/outbox-relay.ts", fn: "sendOneByOne" },
  ],
  decidido: [
    { file: "payments/src/pagamentos.ts", fn: "decidePagamento" },
    { file: "payments/src/domain/decisao.ts", fn: "decide" },
  ],
  "resultado-aplicado": [
    { file: "orders-api/src/pedidos.ts", fn: "applyResultado" },
    { file: "orders-api/src/domain/pedido.ts", fn: "resultadoEffect" },
  ],
  "resultado-repetido": [
    { file: "orders-api/src/pedidos.ts", fn: "applyResultado" },
    { file: "orders-api/src/domain/pedido.ts", fn: "resultadoEffect" },
  ],
};

/** The broker edition: each payment request's steps (GET /pedidos/{id}/historico). */
export const BROKER_STEPS: Record<string, CodeRef[]> = {
  "registro-guardado": [{ file: "broker/orders/src/pedidos.ts", fn: "requestPagamento" }],
  "publicacao-confirmada": [
    { file: "broker/orders/src/messaging/solicitacao-publisher.ts", fn: "solicitacaoPublisher" },
  ],
  "decisao-guardada": [
    { file: "broker/payments/src/pagamentos.ts", fn: "decidePagamento" },
    { file: "broker/payments/src/domain/decisao.ts", fn: "decide" },
  ],
  "resultado-aplicado": [
    { file: "broker/orders/src/pedidos.ts", fn: "applyResultado" },
    { file: "broker/orders/src/domain/pedido.ts", fn: "resultadoEffect" },
  ],
};

/** "orders-api/src/pedidos.ts · createPedido", the way a step names its code on the page. */
export const describeCode = (refs: CodeRef[] | undefined) =>
  (refs ?? []).map((r) => `${r.file} · ${r.fn}`).join("; ");
