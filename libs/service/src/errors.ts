import { erroDeValidacao } from "@shop/contracts";
import type { ErrorRequestHandler } from "express";
import type { z } from "zod";
import type { Logger } from "./logger.ts";

/** The one error model: a name for code, a message for people, an HTTP status. */
export class AppError extends Error {
  constructor(
    readonly nome: string,
    message: string,
    readonly status: number,
    readonly campos?: Record<string, string>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const naoEncontrado = (what: string) =>
  new AppError("nao-encontrado", `${what} not found`, 404);

/** Parses a request body with its contract; a breach is a 400 naming each failing field. */
export function validar<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const { erro, campos } = erroDeValidacao(result.error.issues);
    throw new AppError("entrada-invalida", erro, 400, campos);
  }
  return result.data;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** Maps every error to a JSON body; nothing is swallowed: 5xx are logged with their cause. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (error instanceof AppError) {
      if (error.status >= 500) log.error(error.message, { cause: String(error.cause ?? "") });
      res.status(error.status).json({
        erro: error.message,
        ...(error.campos ? { campos: error.campos } : {}),
      });
      return;
    }
    const parserError = error as BodyParserError;
    if (parserError?.type === "entity.parse.failed") {
      res.status(400).json({ erro: "malformed JSON", campos: { "(body)": "is not valid JSON" } });
      return;
    }
    if (parserError?.type === "entity.too.large") {
      res.status(413).json({ erro: "body too large" });
      return;
    }
    log.error("unexpected error", { error: error instanceof Error ? error.stack : String(error) });
    res.status(500).json({ erro: "internal error" });
  };
}
