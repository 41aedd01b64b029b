import {
  API_PEDIDOS,
  CabecalhosDoPedidoSchema,
  CHAVE_DE_IDEMPOTENCIA,
  ConsultaPedidosSchema,
  type EstadoOutbox,
  fromCents,
  LISTA_DE_PEDIDOS,
  type Modo,
  NovoPedidoSchema,
  type ParticaoPresa,
  type Pedido as PedidoWire,
  type Plataforma,
} from "@shop/contracts";
import {
  AppError,
  createHttpApp,
  finalizarApp,
  type Logger,
  naoEncontrado,
  validar,
} from "@shop/service";
import type { Express } from "express";
import type { Pedido } from "../domain/pedido.ts";
import type { PedidosService } from "../pedidos.ts";

export function toWire(p: Pedido): PedidoWire {
  return {
    id: p.id,
    cliente: p.cliente,
    item: p.item,
    quantidade: p.quantidade,
    valor: fromCents(p.valorCentavos),
    status: p.status,
    motivo: p.motivo,
    processadoPor: p.processadoPor,
    criadoEm: p.criadoEm,
  };
}

export interface AppDeps {
  pedidos: PedidosService;
  /** The outbox's state; null when the outbox is off. */
  outbox: (() => EstadoOutbox) | null;
  modo: Modo;
  /** The results consumer's stuck partitions; null without Kafka. */
  presas: (() => ParticaoPresa[]) | null;
  /** The platform panel's data; null in the synchronous configuration (no Kafka). */
  plataforma: (() => Promise<Plataforma>) | null;
  frontOrigin: string;
  log: Logger;
}

/** The orders API. Handlers parse, call the use case, map the result. */
export function createApp({
  pedidos,
  outbox,
  presas,
  modo,
  plataforma,
  frontOrigin,
  log,
}: AppDeps): Express {
  const app = createHttpApp({ corsOrigin: frontOrigin });

  app.post("/pedidos", async (req, res) => {
    const dados = validar(NovoPedidoSchema, req.body);
    const chave = validar(CabecalhosDoPedidoSchema, req.headers)[CHAVE_DE_IDEMPOTENCIA];
    if (!chave) {
      res.status(201).json(toWire(await pedidos.criar(dados)));
      return;
    }
    const resposta = await pedidos.criarUmaVez(dados, chave, toWire);
    if (resposta.repetida) res.set("Idempotent-Replayed", "true");
    res.status(resposta.status).json(resposta.body);
  });

  app.get("/pedidos", (req, res) => {
    const { limite } = validar(ConsultaPedidosSchema, req.query);
    res.json(pedidos.listar(limite ? Number(limite) : LISTA_DE_PEDIDOS.padrao).map(toWire));
  });

  app.get("/pedidos/:id", (req, res) => {
    const id = Number(req.params.id);
    const pedido = Number.isSafeInteger(id) && id > 0 ? pedidos.buscar(id) : null;
    if (!pedido) throw naoEncontrado(`order ${req.params.id}`);
    res.json(toWire(pedido));
  });

  app.get("/pedidos/:id/historico", (req, res) => {
    const id = Number(req.params.id);
    const historico = Number.isSafeInteger(id) && id > 0 ? pedidos.historico(id) : null;
    if (!historico) throw naoEncontrado(`order ${req.params.id}`);
    res.json(historico);
  });

  app.get("/plataforma", async (_req, res) => {
    if (!plataforma)
      throw new AppError("sem-kafka", "the synchronous configuration does not use Kafka", 404);
    res.json({ ...(await plataforma()), outbox: outbox?.() ?? null });
  });

  app.get("/saude", (_req, res) => {
    res.json({
      status: "ok",
      modo,
      outbox: outbox?.() ?? null,
      particoesPresas: presas?.() ?? null,
    });
  });

  finalizarApp(app, API_PEDIDOS, log);
  return app;
}
