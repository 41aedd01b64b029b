import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/**
 * Every HTTP answer a test receives through http() is checked against the OpenAPI
 * document the service itself serves: the route and status must be documented and a JSON
 * body must match its schema. A document that drifts from the code fails the tests.
 */
interface Operacao {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
interface Documento {
  paths: Record<string, Record<string, Operacao>>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const validators = new WeakMap<object, ValidateFunction>();
/** A service's document as its paths, each made a pattern once. */
type Rotas = { re: RegExp; methods: Record<string, Operacao> }[];
const documentos = new Map<string, Promise<Rotas | null>>();

/**
 * Forgets the documents read so far: each test file starts with none (test/helpers/
 * per-file.ts). The cache is keyed by origin, and the files of a project share their worker
 * (isolate: false), so a port one file's service had used could be another service's in a
 * later file: on 2026-11-29 the broker payments service's GET /decisoes was checked against
 * an orders service's document read earlier on the same port.
 */
export function forgetDocuments(): void {
  documentos.clear();
}

function documentoDe(origin: string): Promise<Rotas | null> {
  let doc = documentos.get(origin);
  if (!doc) {
    doc = fetch(`${origin}/openapi.json`, { signal: AbortSignal.timeout(10_000) })
      .then(async (r) => (r.ok ? ((await r.json()) as Documento) : null))
      .then(
        (d) =>
          d &&
          Object.entries(d.paths).map(([template, methods]) => ({
            re: new RegExp(`^${template.replaceAll(/\{\w+\}/g, "[^/]+")}$`),
            methods,
          })),
      )
      .catch(() => null);
    documentos.set(origin, doc);
  }
  return doc;
}

function operacao(rotas: Rotas, method: string, pathname: string): Operacao | undefined {
  return rotas.find((r) => r.re.test(pathname))?.methods[method.toLowerCase()];
}

const descrever = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message}`).join("; ");

export async function validateResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(method.toUpperCase())) return;
  const { origin, pathname } = new URL(url);
  const doc = await documentoDe(origin);
  if (!doc) return; // not one of the shop's APIs (a bare server in a benchmark, say)
  const op = operacao(doc, method, pathname);
  const where = `${method} ${pathname} -> ${status}`;
  if (!op) {
    if (status !== 404)
      throw new Error(`OpenAPI: ${where}, but the route is not in the service's document`);
    return;
  }
  const resposta = op.responses[String(status)];
  if (!resposta) throw new Error(`OpenAPI: ${where}, a status the document does not list`);
  const schema = resposta.content?.["application/json"]?.schema;
  if (!schema || !contentType?.includes("application/json")) return;
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (!validate(body))
    throw new Error(
      `OpenAPI: ${where}: the body does not match the document: ${descrever(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
}
