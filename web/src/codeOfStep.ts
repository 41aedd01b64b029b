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

/**
 * The code behind each box of the picture of the flow (components/FlowPicture.tsx): the
 * timeline's own entries where a box is a step's place, one more where it is not. Held to
 * the code by the same test.
 */
export const FLOW_BOXES: Record<string, CodeRef[]> = {
  "event-log:orders-api": [
    ...(EVENT_LOG_STEPS.criado ?? []),
    ...(EVENT_LOG_STEPS["evento-confirmado"] ?? []),
  ],
  "event-log:pagamentos": [
    {
      file: "payments/src/messaging/pedidos-criados-consumer.ts",
      fn: "startPedidosCriadosConsumer",
    },
    ...(EVENT_LOG_STEPS.decidido ?? []),
  ],
  "event-log:pedidos-api": [
    { file: "orders-api/src/messaging/resultados-consumer.ts", fn: "startResultadosConsumer" },
    ...(EVENT_LOG_STEPS["resultado-aplicado"] ?? []),
  ],
  "event-log:analytics": [{ file: "analytics/src/analytics.ts", fn: "runAnalytics" }],
  "event-log:dlq": [{ file: "libs/kafka/src/consumer/record.ts", fn: "deadLetter" }],
  "event-log:brokers": [{ file: "orders-api/src/messaging/platform.ts", fn: "platformReader" }],
  "broker:orders": [
    ...(BROKER_STEPS["registro-guardado"] ?? []),
    ...(BROKER_STEPS["publicacao-confirmada"] ?? []),
  ],
  "broker:payments": [
    {
      file: "broker/payments/src/messaging/solicitacoes-consumer.ts",
      fn: "startSolicitacoesConsumer",
    },
    ...(BROKER_STEPS["decisao-guardada"] ?? []),
  ],
  "broker:erros": [{ file: "libs/amqp/src/consumer.ts", fn: "retryOrDeadLetter" }],
  "broker:nodes": [{ file: "broker/orders/src/messaging/platform.ts", fn: "readFrom" }],
};
