import pino from "pino";
import pretty from "pino-pretty";
import { contextoAtual } from "./trace.ts";

/**
 * Structured logs (pino): one JSON object per line, with the component, the trace id of
 * the work being done (see trace.ts) and the fields given, such as pedido or solicitacao.
 * On a terminal they are pretty-printed for people; piped, they stay JSON for tools.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

type Saida = ((line: string) => void) | "stdout" | "stderr";

function destino(saida: Saida): pino.DestinationStream {
  if (typeof saida === "function") return { write: (s: string) => saida(s.trimEnd()) };
  const fd = saida === "stderr" ? 2 : 1;
  if ((fd === 2 ? process.stderr : process.stdout).isTTY)
    return pretty({
      sync: true,
      colorize: true,
      destination: fd,
      ignore: "pid,hostname",
      translateTime: "SYS:HH:MM:ss.l",
    });
  return pino.destination({ dest: fd, sync: true });
}

/** Lines go to stdout, to stderr (the CLIs), or to a function (tests keep them). */
export function createLogger(component: string, saida: Saida = "stdout"): Logger {
  const p = pino(
    {
      base: { component },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const c = contextoAtual();
        return c ? { trace: c.traceId } : {};
      },
    },
    destino(saida),
  );
  return {
    info: (message, fields) => p.info(fields ?? {}, message),
    warn: (message, fields) => p.warn(fields ?? {}, message),
    error: (message, fields) => p.error(fields ?? {}, message),
  };
}
