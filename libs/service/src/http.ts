import cors from "cors";
import express, { type Express, type RequestHandler } from "express";
import helmet from "helmet";
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
 * The Express app every service starts from: CORS for exactly one origin when given,
 * security headers (helmet), no x-powered-by, JSON bodies only, at most 1 MB.
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
  app.use(helmet());
  app.use(requireJson);
  app.use(express.json({ limit: BODY_LIMIT }));
  return app;
}
