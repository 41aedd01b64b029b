import cors from "cors";
import express, { type Express, type RequestHandler } from "express";
import { errorBody } from "./errors.ts";
import { measureHttp } from "./metrics.ts";
import { startTracing, traceHttp } from "./trace.ts";

/** Bodies larger than this are refused with 413. */
export const BODY_LIMIT = "1mb";

/** A request with a body must say it is JSON; anything else is 415. */
export const requireJson: RequestHandler = (req, res, next) => {
  const hasBody =
    Number(req.headers["content-length"] ?? 0) > 0 ||
    req.headers["transfer-encoding"] !== undefined;
  if (hasBody && !req.is("application/json")) {
    res.status(415).json(errorBody(415, "the body must be JSON (Content-Type: application/json)"));
    return;
  }
  next();
};

/**
 * The security headers every JSON answer carries: the set OWASP's REST Security Cheat Sheet
 * names for API responses ("Security Headers"), with the Content-Type Express sets. The
 * other headers of helmet's set (a policy for scripts, styles and images, cross-origin
 * isolation, referrer and DNS-prefetch policies) govern how a browser renders a page; an
 * API's JSON is never rendered as one, and the one HTML page, /docs, has helmet's whole
 * set (docs.ts). Set here once per answer, as fixed pairs: helmet's twelve cost a seventh
 * of the orders API's CPU a request (docs/benchmarks.md).
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
};
const apiHeaderPairs = Object.entries(API_HEADERS);

/** Sets API_HEADERS on the answer. */
export const apiHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of apiHeaderPairs) res.setHeader(name, value);
  next();
};

/**
 * The Express app every service starts from: CORS for exactly one origin when given,
 * the API's security headers (API_HEADERS), no x-powered-by, JSON bodies only, at most 1 MB.
 */
export function createHttpApp({ corsOrigin }: { corsOrigin?: string } = {}): Express {
  // Each request's span comes from OpenTelemetry's http instrumentation, set up here when
  // the service's main has not done it first.
  startTracing();
  const app = express();
  app.disable("x-powered-by");
  app.use(traceHttp);
  app.use(measureHttp);
  // First, so that every answer (a 415 or 413 too) carries the CORS headers the page needs.
  if (corsOrigin) app.use(cors({ origin: corsOrigin }));
  app.use(apiHeaders);
  app.use(requireJson);
  app.use(express.json({ limit: BODY_LIMIT }));
  return app;
}
