import { z } from "zod";
import type { HttpError } from "./http.ts";

/**
 * OpenAPI 3.1 documents built from the same zod schemas the services validate with, so
 * that the document cannot drift from the code. Each API lists its routes once (in
 * apis.ts); the services serve the document and a test checks both ways that every route
 * of the code is in it and every route in it answers.
 */

/** The JSON body of every 4xx/5xx answer (HttpError in http.ts), as the documents show it. */
export const ErrorSchema: z.ZodType<HttpError> = z.object({
  erro: z.string().describe("what went wrong, for a developer (English)"),
  mensagem: z.string().describe("the same for a person, in Portuguese"),
  campos: z.record(z.string(), z.string()).optional(),
});

export interface ResponseSpec {
  description: string;
  /** A JSON body; absent with `tipo` for text or HTML. */
  schema?: z.ZodType;
  contentType?: "text/plain" | "text/html" | "application/json";
}

export interface RouteSpec {
  method: "get" | "post";
  /** OpenAPI style: /pedidos/{id}. */
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: Record<string, { schema: z.ZodType; description: string }>;
  headers?: Record<string, { schema: z.ZodType; description: string }>;
  responses: Record<number, ResponseSpec>;
}

export interface ApiInfo {
  title: string;
  description: string;
  routes: RouteSpec[];
}

const errorResponse = (description: string): ResponseSpec => ({ description, schema: ErrorSchema });

/** Answers every route may give, from the shared HTTP layer (libs/service). */
function commonResponses(r: RouteSpec): Record<number, ResponseSpec> {
  const all: Record<number, ResponseSpec> = { 500: errorResponse("internal error") };
  if (r.method === "post") {
    all[400] = errorResponse(
      "malformed JSON, or a body that breaks the contract (`campos` names each field)",
    );
    all[413] = errorResponse("body larger than 1 MB");
    all[415] = errorResponse(
      "the body is not JSON in UTF-8, or its Content-Encoding is unsupported",
    );
    all[503] = errorResponse(
      "the service's database has no room left (disk full), or does not answer (PostgreSQL stopped): nothing was saved; try again later",
    );
  }
  if (r.query) all[400] = errorResponse("a query parameter out of its range (`campos` names it)");
  return { ...all, ...r.responses };
}

const jsonSchema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });

const content = (r: ResponseSpec) => {
  if (r.schema) return { "application/json": { schema: jsonSchema(r.schema, "output") } };
  return { [r.contentType ?? "application/json"]: { schema: { type: "string" } } };
};

export function openApiDocument(api: ApiInfo, versao = "1.0.0") {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of api.routes) {
    const pathParameters = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParameters = Object.entries(r.query ?? {}).map(([name, q]) => ({
      name,
      in: "query",
      required: false,
      description: q.description,
      schema: jsonSchema(q.schema, "input"),
    }));
    const headerParameters = Object.entries(r.headers ?? {}).map(([name, q]) => ({
      name,
      in: "header",
      required: false,
      description: q.description,
      schema: jsonSchema(q.schema, "input"),
    }));
    const parameters = [...pathParameters, ...queryParameters, ...headerParameters];
    paths[r.path] ??= {};
    (paths[r.path] as Record<string, unknown>)[r.method] = {
      summary: r.summary,
      operationId: `${r.method}${r.path.replaceAll(/[{}]/g, "").replaceAll(/[/.-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: jsonSchema(r.body, "input") } },
            },
          }
        : {}),
      responses: Object.fromEntries(
        Object.entries(commonResponses(r)).map(([status, response]) => [
          status,
          { description: response.description, content: content(response) },
        ]),
      ),
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: api.title, version: versao, description: api.description },
    paths,
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
