import { z } from "zod";

/** PORTA and HOST, the HTTP settings every service reads. */
/** True for exactly one http(s) origin, as a browser sends it: scheme://host[:port]. */
function isOneOrigin(o: string): boolean {
  try {
    const u = new URL(o);
    return ["http:", "https:"].includes(u.protocol) && u.origin === o && !o.includes("*");
  } catch {
    return false;
  }
}

/**
 * The web front end's origin, the only one CORS allows: one http(s) origin, never `*`
 * (the services have no authentication, so any page on the web could then call them).
 */
export const frontOriginShape = {
  FRONT_ORIGIN: z.string().default("http://localhost:5173").refine(isOneOrigin, {
    error: "must be one origin such as http://localhost:5173 (scheme://host[:port]), never *",
  }),
};

export function httpEnvShape(defaultPort: number) {
  return {
    PORTA: z.coerce.number().int().min(0).max(65535).default(defaultPort),
    /** The address to listen on: the loopback by default, 0.0.0.0 in containers. */
    HOST: z.string().default("127.0.0.1"),
    /**
     * OpenTelemetry's own settings, read by its SDK (trace.ts): spans are exported over
     * OTLP/HTTP to this endpoint (Jaeger's :4318, say) when set, and not recorded when not.
     * Listed here so that a wrong one is refused at start, naming itself.
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.union([z.literal(""), z.url()]).optional(),
  };
}

/**
 * Reads the environment with a program's schema. When it does not fit, the error names
 * each variable and what is wrong with it, one per line, instead of zod's JSON.
 */
export function readEnvironment<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
