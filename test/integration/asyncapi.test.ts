import { Parser } from "@asyncapi/parser";
import {
  asyncapiBroker,
  asyncapiEventLog,
  ERROR_QUEUES,
  EXCHANGES,
  GROUPS,
  TOPICS,
} from "@shop/contracts";
import { describe, expect, it } from "vitest";

/** AsyncAPI 3 documents of both editions, validated by the AsyncAPI parser. */
const parser = new Parser();

async function erros(doc: unknown) {
  const { document, diagnostics } = await parser.parse(JSON.stringify(doc));
  // severity 0 is an error; warnings (1) and hints do not make a document invalid
  return {
    document,
    erros: diagnostics
      .filter((d) => d.severity === 0)
      .map((d) => `${d.path.join(".")}: ${d.message}`),
  };
}

describe("AsyncAPI documents, generated from the names and zod schemas", () => {
  it("Event-log edition: the document is valid AsyncAPI 3.0 and names both topics with keys, partitions, groups and their dead-letter topics", async () => {
    const { document, erros: e } = await erros(asyncapiEventLog());
    expect(e).toEqual([]);
    expect(document?.version()).toBe("3.0.0");
    const addresses = document
      ?.channels()
      .all()
      .map((c) => c.address());
    expect(addresses).toEqual(
      expect.arrayContaining([
        TOPICS.pedidosCriados,
        TOPICS.pagamentosResultados,
        `${TOPICS.pedidosCriados}.dlq`,
        `${TOPICS.pagamentosResultados}.dlq`,
      ]),
    );
    const text = JSON.stringify(asyncapiEventLog());
    for (const g of Object.values(GROUPS)) expect(text).toContain(`"enum":["${g}"]`);
    const pedido = asyncapiEventLog().components.messages.PedidoCriado;
    expect(pedido.payload.required).toEqual(
      expect.arrayContaining([
        "versao",
        "pedidoId",
        "cliente",
        "item",
        "quantidade",
        "valor",
        "criadoEm",
      ]),
    );
  });

  it("Broker edition: the document is valid AsyncAPI 3.0 and names the exchanges, queues, bindings and .erros dead-letter queues", async () => {
    const { document, erros: e } = await erros(asyncapiBroker());
    expect(e).toEqual([]);
    const text = JSON.stringify(asyncapiBroker());
    for (const name of [...Object.values(EXCHANGES), ...Object.values(ERROR_QUEUES)])
      expect(text).toContain(`"name":"${name}"`);
    expect(document?.operations().all().length).toBe(6);
  });

  it("When a document breaks the AsyncAPI schema, then the parser says so (the check can fail)", async () => {
    const quebrado = { ...asyncapiBroker(), channels: { x: { address: 42 } } };
    expect((await erros(quebrado)).erros.length).toBeGreaterThan(0);
  });
});
