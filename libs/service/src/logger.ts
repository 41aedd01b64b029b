import fs from "node:fs";
import { createRequire } from "node:module";
import pino from "pino";
import { escapeControls } from "./cli.ts";
import { currentContext } from "./trace.ts";

/**
 * Structured logs (pino): one JSON object per line, with the component, the trace id of
 * the work being done (see trace.ts) and the fields given, such as pedido or solicitacao.
 * On a terminal they are one readable line per event; piped, they stay JSON for tools
 * (LOG_FORMAT chooses either way).
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

type AnalyticsOutput = ((line: string) => void) | "stdout" | "stderr";

const perTurn = new Map<1 | 2, pino.DestinationStream>();

const isTerminal = (fd: 1 | 2) => (fd === 2 ? process.stderr : process.stdout).isTTY;

/**
 * Where the text written to stdout (1) or stderr (2) goes when it is not a terminal: the
 * text written in one turn of the event loop goes out in one write, at the end of that
 * turn (setImmediate), rather than in a system call per line. Under load a service prints
 * a line per message; in a profile of the pipeline benchmark, those writes took 8.5 % of
 * a payments instance's busy time, and 5 % once grouped. Lines keep their order (the
 * logger and a service's own prints share this one writer per fd), appear at most a turn
 * later, and are written before the process exits. On a terminal, pino's own synchronous
 * destination writes each line at once.
 *
 * A slow reader does not stop the service. Once process.stdout is touched, fd 1 is
 * non-blocking, and a full pipe refuses a write (EAGAIN): pino's synchronous destination
 * (sonic-boom) then slept 100 ms and tried again, with the event loop stopped, for as long
 * as the reader lagged (`npm start | less` at a full screen, a terminal paused with
 * Ctrl-S behind npm start's runner, a busy supervisor: HTTP, heartbeats and consumers all
 * stopped with it). Here what the pipe refuses waits in memory and is tried again a few
 * milliseconds later, with the lines written meanwhile after it. Past MAX_PENDING bytes
 * waiting the service does wait for its reader, so memory stays bounded; at exit it waits
 * (up to EXIT_WAIT_MS) until everything is written.
 */
export function processOutput(fd: 1 | 2): pino.DestinationStream {
  const existing = perTurn.get(fd);
  if (existing) return existing;
  const output = isTerminal(fd)
    ? // sonic-boom, synchronous: a terminal is written to at once, line by line.
      pino.destination({ dest: fd, sync: true })
    : pipeWriter(fd);
  perTurn.set(fd, output);
  return output;
}

/** Bytes a refused write may leave waiting before the service waits for its reader. */
const MAX_PENDING = 16 * 1024 * 1024;
const RETRY_MS = 5;
const EXIT_WAIT_MS = 10_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const pauseThread = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

function pipeWriter(fd: 1 | 2): pino.DestinationStream {
  /** Text written since the last write, in order. */
  let queued: string[] = [];
  /**
   * Bytes to write, in order, before `queued`: a turn's text once its write begins, then
   * whatever part of it the pipe refused; `waiting`: how many bytes.
   */
  let unwritten: Buffer[] = [];
  let waiting = 0;
  /** A write is scheduled: at the end of this turn, or a retry. */
  let scheduled = false;

  /** Writes what it can; true when nothing is left. A reader gone (EPIPE) drops the rest. */
  const writeNow = (): boolean => {
    if (queued.length > 0) {
      const text = Buffer.from(queued.join(""));
      queued = [];
      unwritten.push(text);
      waiting += text.length;
    }
    while (unwritten.length > 0) {
      const first = unwritten[0] as Buffer;
      try {
        const n = fs.writeSync(fd, first);
        waiting -= n;
        if (n === first.length) unwritten.shift();
        else unwritten[0] = first.subarray(n);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") return false;
        unwritten = [];
        waiting = 0;
      }
    }
    return true;
  };
  const write = () => {
    scheduled = false;
    if (writeNow()) return;
    while (waiting > MAX_PENDING) {
      pauseThread(RETRY_MS);
      if (writeNow()) return;
    }
    scheduled = true;
    setTimeout(write, RETRY_MS);
  };
  process.on("exit", () => {
    const until = Date.now() + EXIT_WAIT_MS;
    while (!writeNow() && Date.now() < until) pauseThread(RETRY_MS);
  });
  return {
    write(text: string) {
      queued.push(text);
      if (!scheduled) {
        scheduled = true;
        setImmediate(write);
      }
    },
  };
}

/** `text`: one readable line per event, for a person; `json`: one JSON object per line. */
export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * LOG_FORMAT, the one setting every program's logger reads (before its config, so that
 * a config error is logged in it): `text` or `json`; unset, text on a terminal and JSON
 * when the output is piped. `npm start` sets it to text for the services it runs when its
 * own output is a terminal, with FORCE_COLOR, so that their piped output reads as on one.
 */
export function logFormat(fd: 1 | 2, env: NodeJS.ProcessEnv = process.env): LogFormat {
  const asked = env.LOG_FORMAT;
  if (asked === undefined || asked === "") return isTerminal(fd) ? "text" : "json";
  if ((LOG_FORMATS as readonly string[]).includes(asked)) return asked as LogFormat;
  throw new Error(`LOG_FORMAT: expected ${LOG_FORMATS.join(" or ")}, got ${JSON.stringify(asked)}`);
}

/** True when lines are written as text for a person. */
const forPeople = (output: AnalyticsOutput) =>
  typeof output !== "function" && logFormat(output === "stderr" ? 2 : 1) === "text";

/**
 * A log line's message and fields as a terminal may show them: text the service did not
 * write itself (an item, a key, a reason from a broker) has its control characters
 * escaped. JSON lines need nothing: a reader parses them.
 */
export function forTerminal(valor: unknown): unknown {
  if (typeof valor === "string") return escapeControls(valor);
  if (Array.isArray(valor)) return valor.map(forTerminal);
  if (
    valor !== null &&
    typeof valor === "object" &&
    Object.getPrototypeOf(valor) === Object.prototype
  ) {
    return Object.fromEntries(Object.entries(valor).map(([k, v]) => [k, forTerminal(v)]));
  }
  return valor;
}

/**
 * pino-pretty is loaded only for a terminal (as trace.ts loads the exporter only when
 * exporting): a service's logs are JSON, and loading it anyway cost the orders API 1-3 MB
 * at rest (82 MB against 83-86).
 */
const lazy = createRequire(import.meta.url);

function destino(output: AnalyticsOutput): pino.DestinationStream {
  if (typeof output === "function") return { write: (s: string) => output(s.trimEnd()) };
  const fd = output === "stderr" ? 2 : 1;
  if (forPeople(output))
    // One line per event: the time, the level, the message, then its fields as JSON. The
    // component is left out: a terminal shows one service, and npm start prefixes each
    // line with its service's name. Colour where the terminal (or FORCE_COLOR) allows it.
    return (lazy("pino-pretty") as typeof import("pino-pretty"))({
      sync: true,
      destination: fd,
      singleLine: true,
      // An `error` field is a string here (a message or a stack): kept on the line too.
      errorLikeObjectKeys: [],
      ignore: "pid,hostname,component",
      translateTime: "SYS:HH:MM:ss.l",
    });
  return processOutput(fd);
}

/** Lines go to stdout, to stderr (the CLIs), or to a function (tests keep them). */
export function createLogger(component: string, output: AnalyticsOutput = "stdout"): Logger {
  const p = pino(
    {
      base: { component },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const c = currentContext();
        return c ? { trace: c.traceId } : {};
      },
    },
    destino(output),
  );
  if (forPeople(output)) {
    const clean = (fields?: Record<string, unknown>) =>
      forTerminal(fields ?? {}) as Record<string, unknown>;
    return {
      info: (message, fields) => p.info(clean(fields), escapeControls(message)),
      warn: (message, fields) => p.warn(clean(fields), escapeControls(message)),
      error: (message, fields) => p.error(clean(fields), escapeControls(message)),
    };
  }
  return {
    info: (message, fields) => p.info(fields ?? {}, message),
    warn: (message, fields) => p.warn(fields ?? {}, message),
    error: (message, fields) => p.error(fields ?? {}, message),
  };
}
