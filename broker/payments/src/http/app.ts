import { API_PAGAMENTOS_BROKER, fromCents } from "@shop/contracts";
import { createHttpApp, finishApp, type Logger } from "@shop/service";
import type { Express } from "express";
import { listDecisoes, type PagamentoPorts } from "../pagamentos.ts";

/** Its work arrives as messages; HTTP only lets a person look. */
export function createApp({
  pagamentos,
  connected,
  log,
}: {
  pagamentos: PagamentoPorts;
  connected: () => boolean;
  log: Logger;
}): Express {
  const app = createHttpApp();
  app.get("/saude", (_req, res) => {
    res.json({ status: "ok", rabbitmq: connected() ? "connected" : "disconnected" });
  });
  app.get("/decisoes", (_req, res) => {
    res.json(
      listDecisoes(pagamentos).map(({ valorCentavos, ...d }) => ({
        ...d,
        valor: fromCents(valorCentavos),
      })),
    );
  });
  finishApp(app, API_PAGAMENTOS_BROKER, log);
  return app;
}
