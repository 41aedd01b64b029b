import {
  API_PEDIDOS_BROKER,
  fromCents,
  ItemSchema,
  NovoPedidoBrokerSchema,
  PedidoDePagamentoSchema,
} from "@shop/contracts";
import { createHttpApp, finalizarApp, type Logger, validar } from "@shop/service";
import type { Express } from "express";
import { type Pedido, totalDe } from "../domain/pedido.ts";
import type { PedidosService } from "../pedidos.ts";

export function toWire(p: Pedido) {
  return {
    id: p.id,
    clienteId: p.clienteId,
    status: p.status,
    total: fromCents(totalDe(p.itens)),
    itens: p.itens.map((i) => ({
      sku: i.sku,
      quantidade: i.quantidade,
      precoUnitario: fromCents(i.precoCentavos),
    })),
  };
}

/** The broker edition's orders API. The old endpoint that took an approval from the client does not exist. */
export function createApp({ pedidos, log }: { pedidos: PedidosService; log: Logger }): Express {
  const app = createHttpApp();

  app.post("/pedidos", (req, res) => {
    res.status(201).json(toWire(pedidos.criar(validar(NovoPedidoBrokerSchema, req.body))));
  });

  app.get("/pedidos/:id", (req, res) => {
    res.json(toWire(pedidos.buscar(req.params.id)));
  });

  app.get("/pedidos/:id/historico", (req, res) => {
    res.json(pedidos.historico(req.params.id));
  });

  app.post("/pedidos/:id/itens", (req, res) => {
    res.json(toWire(pedidos.adicionarItem(req.params.id, validar(ItemSchema, req.body))));
  });

  app.post("/pedidos/:id/pagamentos", async (req, res) => {
    const body = validar(PedidoDePagamentoSchema, req.body);
    const resposta = await pedidos.solicitarPagamento(req.params.id, body);
    res.status(resposta.status).json(resposta.body);
  });

  finalizarApp(app, API_PEDIDOS_BROKER, log);
  return app;
}
