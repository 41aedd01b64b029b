import { Validator } from "@seriousme/openapi-schema-validator";
import {
  API_PAGAMENTOS,
  API_PAGAMENTOS_BROKER,
  API_PEDIDOS,
  API_PEDIDOS_BROKER,
  type ApiInfo,
  openApiDocument,
} from "@shop/contracts";
import { listen } from "@shop/service";
import type { Express } from "express";
import { describe, expect, it } from "vitest";
import { createApp as brokerOrdersApp } from "../../broker/orders/src/http/app.ts";
import { createApp as brokerPaymentsApp } from "../../broker/payments/src/http/app.ts";
import { createApp as ordersApp } from "../../orders-api/src/http/app.ts";
import { createApp as paymentsApp } from "../../payments/src/http/app.ts";
import { validateResponse } from "../helpers/openapi.ts";
import { capturingLogger, http } from "../helpers/shop.ts";

const log = capturingLogger("openapi-test");
// Route registration never calls the use cases: empty stand-ins are enough to list routes.
const nada = {} as never;
const apps: [ApiInfo, () => Express][] = [
  [
    API_PEDIDOS,
    () =>
      ordersApp({
        pedidos: nada,
        outbox: null,
        stuckPartitions: null,
        modo: "eventos",
        plataforma: null,
        deadLetters: null,
        frontOrigin: "http://localhost:5173",
        log,
      }),
  ],
  [
    API_PAGAMENTOS,
    () =>
      paymentsApp({
        instancia: "x",
        modo: "eventos",
        pagamentos: nada,
        consumerStatus: () => null,
        log,
      }),
  ],
  [API_PEDIDOS_BROKER, () => brokerOrdersApp({ pedidos: nada, log, plataforma: nada })],
  [
    API_PAGAMENTOS_BROKER,
    () => brokerPaymentsApp({ pagamentos: nada, connected: () => true, log }),
  ],
];

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** "GET /pedidos/{id}" for every route Express has, in OpenAPI's path style. */
function rotasDoCodigo(app: Express): string[] {
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  return stack.flatMap((l) =>
    l.route
      ? Object.keys(l.route.methods).map(
          (m) => `${m.toUpperCase()} ${l.route?.path.replaceAll(/:(\w+)/g, "{$1}")}`,
        )
      : [],
  );
}

function rotasDoDocumento(api: ApiInfo): string[] {
  return Object.entries(openApiDocument(api).paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

describe("OpenAPI documents, generated from the zod schemas", () => {
  for (const [api, app] of apps) {
    it(`${api.title}: the document is valid OpenAPI 3.1`, async () => {
      const validator = new Validator();
      const result = await validator.validate(openApiDocument(api));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe("3.1");
    });

    it(`${api.title}: every route of the code is in the document, and every route in the document is in the code`, () => {
      expect(rotasDoCodigo(app()).sort()).toEqual(rotasDoDocumento(api).sort());
    });
  }

  it("When a service answers, then its own /openapi.json and /docs describe it, and a body or status that drifts from the document fails the tests", async () => {
    const server = await listen(
      brokerPaymentsApp({
        pagamentos: { decisoes: () => [] } as never,
        connected: () => true,
        log,
      }),
      0,
      "127.0.0.1",
    );
    try {
      const saude = await http("GET", `${server.url}/saude`); // validated on the way
      expect(saude.body).toEqual({ status: "ok", rabbitmq: "connected" });
      const docs = await fetch(`${server.url}/docs`);
      expect(docs.headers.get("content-type")).toMatch(/text\/html/);
      const html = await docs.text();
      for (const path of ["/saude", "/decisoes", "/metrics", "/openapi.json"])
        expect(html).toContain(path);

      await expect(
        validateResponse("GET", `${server.url}/saude`, 200, "application/json", {
          status: "ok",
          rabbitmq: "maybe",
        }),
      ).rejects.toThrow(/does not match the document/);
      await expect(
        validateResponse("GET", `${server.url}/saude`, 418, "application/json", {}),
      ).rejects.toThrow(/status the document does not list/);
      await expect(
        validateResponse("GET", `${server.url}/nowhere`, 200, "application/json", {}),
      ).rejects.toThrow(/not in the service's document/);
    } finally {
      await server.close();
    }
  });
});
