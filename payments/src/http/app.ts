import { API_PAGAMENTOS, type Modo, PagamentoSincronoSchema } from "@shop/contracts";
import type { ConsumerStatus } from "@shop/kafka";
import { AppError, createHttpApp, finishApp, type Logger, validate } from "@shop/service";
import type { Express } from "express";
import {
  decidePagamento,
  type PagamentoPorts,
  recentDecisions,
  recordDecision,
} from "../pagamentos.ts";

export interface AppDeps {
  instancia: string;
  modo: Modo;
  pagamentos: PagamentoPorts;
  consumerStatus: () => ConsumerStatus | null;
  log: Logger;
}

export function createApp({ instancia, modo, pagamentos, consumerStatus, log }: AppDeps): Express {
  const app = createHttpApp();

  app.get("/saude", (_req, res) => {
    const consumer = consumerStatus();
    res.json({
      status: "ok",
      instancia,
      modo,
      consumidor: consumer && {
        conectado: consumer.connected,
        grupo: consumer.group,
        particoes: consumer.partitions,
        presas: consumer.stuck,
      },
    });
  });

  app.get("/pagamentos", (_req, res) => {
    res.json(recentDecisions(pagamentos));
  });

  app.post("/pagamentos", async (req, res) => {
    if (modo !== "sincrono") {
      throw new AppError(
        "so-no-modo-sincrono",
        "POST /pagamentos exists only in the synchronous configuration",
        404,
      );
    }
    const { pedidoId, valor } = validate(PagamentoSincronoSchema, req.body);
    const decisao = await decidePagamento(pagamentos, valor);
    const processadoEm = new Date().toISOString();
    recordDecision(pagamentos, { pedidoId, valor, ...decisao, processadoEm, origem: "http" }, null);
    res.json(decisao);
  });

  finishApp(app, API_PAGAMENTOS, log);
  return app;
}
