import { readFileSync } from "node:fs";
import { type HttpError, mensagemFor, validationError } from "@shop/contracts";
import type { ErrorRequestHandler } from "express";
import type { z } from "zod";
import type { Logger } from "./logger.ts";

/**
 * The one error model: a name for code, a message for developers, an HTTP status; with
 * `mensagem`, the sentence a person reads (otherwise the status's own), and `body`,
 * fields the answer carries beside them.
 */
export class AppError extends Error {
  readonly mensagem: string;
  readonly body: Record<string, unknown>;
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly fields?: Record<string, string>,
    options?: { cause?: unknown; mensagem?: string; body?: Record<string, unknown> },
  ) {
    super(message, options);
    this.mensagem = options?.mensagem ?? mensagemFor(status);
    this.body = options?.body ?? {};
  }
}

/** The JSON body of an error answer: `erro` and the person's `mensagem`, and any more. */
export function errorBody(
  status: number,
  erro: string,
  more: Partial<HttpError> & Record<string, unknown> = {},
): HttpError {
  return { erro, mensagem: mensagemFor(status), ...more };
}

export const notFound = (what: string, mensagem?: string) =>
  new AppError("nao-encontrado", `${what} not found`, 404, undefined, mensagem ? { mensagem } : {});

/** Parses a request body with its contract; a breach is a 400 naming each failing field. */
export function validate<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const { erro, campos: fields } = validationError(result.error.issues);
    throw new AppError("entrada-invalida", erro, 400, fields);
  }
  return result.data;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
}

/**
 * What each body-parser failure means for the client. Every one is the client's doing, so
 * every one is a 4xx with the JSON error body: never a 500 for bytes a client chose.
 */
const BODY_FAILURES: Record<string, { status: number; erro: string; field?: string }> = {
  "entity.parse.failed": { status: 400, erro: "malformed JSON", field: "is not valid JSON" },
  "entity.too.large": { status: 413, erro: "body too large" },
  "charset.unsupported": {
    status: 415,
    erro: "unsupported charset: the body must be JSON in UTF-8",
  },
  "encoding.unsupported": {
    status: 415,
    erro: "unsupported Content-Encoding: send the body plain or as gzip, deflate or br",
  },
  "request.aborted": { status: 400, erro: "the request body ended early" },
  "request.size.invalid": {
    status: 400,
    erro: "the body's length does not match its Content-Length",
  },
};

/** The JSON answer to a body-parser failure, or null when the error is not one. */
function bodyFailure(error: unknown): { status: number; body: HttpError } | null {
  const e = error as BodyParserError | null;
  if (typeof e !== "object" || e === null) return null;
  const known = e.type ? BODY_FAILURES[e.type] : undefined;
  if (known) {
    return {
      status: known.status,
      body: errorBody(
        known.status,
        known.erro,
        known.field ? { campos: { "(body)": known.field } } : {},
      ),
    };
  }
  // Any other client error the parser raises (a corrupt gzip body, say): its own 4xx.
  if (typeof e.status === "number" && e.status >= 400 && e.status < 500 && e.expose) {
    return { status: e.status, body: errorBody(e.status, `unreadable body: ${e.message}`) };
  }
  return null;
}

/** Maps every error to a JSON body; nothing is swallowed: 5xx are logged with their cause. */
/** SQLite could not write because its disk is full: the transaction was rolled back. */
export function storageFull(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { code?: unknown }).code === "SQLITE_FULL"
  );
}

export const STORAGE_FULL_MESSAGE =
  "the database has no room left (disk full): nothing was saved; try again later";

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (error instanceof AppError) {
      if (error.status >= 500) log.error(error.message, { cause: String(error.cause ?? "") });
      res.status(error.status).json({
        ...error.body,
        ...errorBody(error.status, error.message, error.fields ? { campos: error.fields } : {}),
        mensagem: error.mensagem,
      });
      return;
    }
    const failure = bodyFailure(error);
    if (failure) {
      res.status(failure.status).json(failure.body);
      return;
    }
    if (storageFull(error)) {
      log.error("the database is full: a request was refused, nothing saved", {
        error: String(error),
      });
      res.status(503).json(
        errorBody(503, STORAGE_FULL_MESSAGE, {
          mensagem: "O banco de dados está sem espaço: nada foi salvo; tente mais tarde.",
        }),
      );
      return;
    }
    log.error("unexpected error", { error: error instanceof Error ? error.stack : String(error) });
    res.status(500).json(errorBody(500, "internal error"));
  };
}

/** TLS verification failures, as Node names them: the peer's certificate is not trusted. */
const UNTRUSTED =
  /certificate|self[- ]signed|unable to verify|unable to get (local )?issuer|altnames/i;

/** True when a connection failed because the server's certificate is not trusted. */
export function untrustedCertificate(error: unknown): boolean {
  const e = error as { message?: string; code?: string };
  return (
    UNTRUSTED.test(e?.message ?? String(error)) ||
    (typeof e?.code === "string" && /CERT|SIGNATURE|ISSUER/.test(e.code))
  );
}

/** A file a setting names (a CA file, say), read now; unreadable, the error names the setting. */
export function readSettingFile(setting: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${setting}: cannot read ${file} (${(error as Error).message})`);
  }
}
