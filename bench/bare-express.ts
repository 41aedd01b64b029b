import express from "express";

/** The HTTP ceiling: a bare Express endpoint answering 201 with a fixed body. */
const body = {
  id: 1,
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  valor: 37.8,
  status: "AGUARDANDO_PAGAMENTO",
  motivo: null,
  processadoPor: null,
  criadoEm: "2026-11-21T10:00:00.000Z",
};
const app = express();
app.use(express.json());
app.post("/pedidos", (_req, res) => {
  res.status(201).json(body);
});
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(
    `bare express listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
  );
});
