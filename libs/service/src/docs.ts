import { type ApiInfo, openApiDocument } from "@shop/contracts";
import type { Express } from "express";
import helmet from "helmet";
import { errorBody, errorHandler } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { serveMetrics } from "./metrics.ts";

const escapeHtml = (s: string) =>
  s
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");

/** A readable page of the document, rendered here: no script and nothing from another site. */
function page(doc: ReturnType<typeof openApiDocument>): string {
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const o = op as {
        summary: string;
        requestBody?: { content: Record<string, { schema: unknown }> };
        responses: Record<
          string,
          { description: string; content: Record<string, { schema: unknown }> }
        >;
      };
      const body = o.requestBody
        ? `<details><summary>request body</summary><pre>${escapeHtml(JSON.stringify(o.requestBody.content["application/json"]?.schema, null, 2))}</pre></details>`
        : "";
      const responses = Object.entries(o.responses)
        .map(
          ([status, r]) =>
            `<li><details><summary><b>${status}</b> ${escapeHtml(r.description)} <small>${escapeHtml(Object.keys(r.content).join(", "))}</small></summary><pre>${escapeHtml(JSON.stringify(Object.values(r.content)[0]?.schema, null, 2))}</pre></details></li>`,
        )
        .join("");
      return `<section><h2><span class="m ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</h2><p>${escapeHtml(o.summary)}</p>${body}<ul>${responses}</ul></section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
section{border-top:1px solid #ddd;padding:.5rem 0}h2{font-size:1.1rem;font-family:monospace}
.m{display:inline-block;min-width:3.5rem;padding:.1rem .4rem;border-radius:.3rem;color:#fff;text-align:center}
.get{background:#0b57d0}.post{background:#146c2e}pre{background:#f4f4f4;padding:.5rem;overflow:auto;font-size:.8rem}
ul{list-style:none;padding-left:0}</style></head><body>
<h1>${escapeHtml(doc.info.title)}</h1><p>${escapeHtml(doc.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi}).</p>
${ops.join("\n")}</body></html>`;
}

/** GET /openapi.json and GET /docs, from the API's route table in contracts/. */
export function serveDocs(app: Express, api: ApiInfo): void {
  const doc = openApiDocument(api);
  const html = page(doc);
  app.get("/openapi.json", (_req, res) => {
    res.json(doc);
  });
  // An HTML page: helmet's whole set of headers, the one a browser rendering a page needs.
  app.get("/docs", helmet(), (_req, res) => {
    res.type("html").send(html);
  });
}

/** What every API serves besides its own routes: /metrics, /openapi.json and /docs. */
export function operationRoutes(app: Express, api: ApiInfo): void {
  serveMetrics(app);
  serveDocs(app, api);
}

/**
 * Ends every API the same way: /metrics, /openapi.json and /docs, then a JSON 404 for any
 * other route, then the one error handler.
 */
export function finishApp(app: Express, api: ApiInfo, log: Logger): void {
  operationRoutes(app, api);
  app.use((_req, res) => {
    res.status(404).json(errorBody(404, "no such route", { mensagem: "Rota inexistente." }));
  });
  app.use(errorHandler(log));
}
