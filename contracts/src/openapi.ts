import { z } from "zod";
import type { HttpError } from "./http.ts";

/**
 * OpenAPI 3.1 documents built from the same zod schemas the services validate with, so
 * that the document cannot drift from the code. Each API lists its routes once (in
 * apis.ts); the services serve the document and a test checks both ways that every route
 * of the code is in it and every route in it answers.
 */

/** The JSON body of every 4xx/5xx answer (ErroHttp in http.ts), as the documents show it. */
export const ErrorSchema: z.ZodType<HttpError> = z.object({
  erro: z.string(),
  campos: z.record(z.string(), z.string()).optional(),
});

export interface ResponseSpec {
  descricao: string;
  /** A JSON body; absent with `tipo` for text or HTML. */
  esquema?: z.ZodType;
  tipo?: "text/plain" | "text/html" | "application/json";
}

export interface RouteSpec {
  metodo: "get" | "post";
  /** OpenAPI style: /pedidos/{id}. */
  caminho: string;
  resumo: string;
  corpo?: z.ZodType;
  query?: Record<string, { esquema: z.ZodType; descricao: string }>;
  cabecalhos?: Record<string, { esquema: z.ZodType; descricao: string }>;
  respostas: Record<number, ResponseSpec>;
}

export interface ApiInfo {
  titulo: string;
  descricao: string;
  rotas: RouteSpec[];
}

const erro = (descricao: string): ResponseSpec => ({ descricao, esquema: ErrorSchema });

/** Answers every route may give, from the shared HTTP layer (libs/service). */
function comuns(r: RouteSpec): Record<number, ResponseSpec> {
  const todas: Record<number, ResponseSpec> = { 500: erro("internal error") };
  if (r.metodo === "post") {
    todas[400] = erro(
      "malformed JSON, or a body that breaks the contract (`campos` names each field)",
    );
    todas[413] = erro("body larger than 1 MB");
    todas[415] = erro("the body is not JSON in UTF-8, or its Content-Encoding is unsupported");
  }
  if (r.query) todas[400] = erro("a query parameter out of its range (`campos` names it)");
  return { ...todas, ...r.respostas };
}

const jsonSchema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });

const conteudo = (r: ResponseSpec) => {
  if (r.esquema) return { "application/json": { schema: jsonSchema(r.esquema, "output") } };
  return { [r.tipo ?? "application/json"]: { schema: { type: "string" } } };
};

export function openApiDocument(api: ApiInfo, versao = "1.0.0") {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of api.rotas) {
    const parametrosDeCaminho = [...r.caminho.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const parametrosDeQuery = Object.entries(r.query ?? {}).map(([name, q]) => ({
      name,
      in: "query",
      required: false,
      description: q.descricao,
      schema: jsonSchema(q.esquema, "input"),
    }));
    const parametrosDeCabecalho = Object.entries(r.cabecalhos ?? {}).map(([name, q]) => ({
      name,
      in: "header",
      required: false,
      description: q.descricao,
      schema: jsonSchema(q.esquema, "input"),
    }));
    const parameters = [...parametrosDeCaminho, ...parametrosDeQuery, ...parametrosDeCabecalho];
    paths[r.caminho] ??= {};
    (paths[r.caminho] as Record<string, unknown>)[r.metodo] = {
      summary: r.resumo,
      operationId: `${r.metodo}${r.caminho.replaceAll(/[{}]/g, "").replaceAll(/[/.-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.corpo
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: jsonSchema(r.corpo, "input") } },
            },
          }
        : {}),
      responses: Object.fromEntries(
        Object.entries(comuns(r)).map(([status, resposta]) => [
          status,
          { description: resposta.descricao, content: conteudo(resposta) },
        ]),
      ),
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: api.titulo, version: versao, description: api.descricao },
    paths,
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
