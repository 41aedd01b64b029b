import type { Server } from "node:http";
import type { Express } from "express";
import type { Logger } from "./logger.ts";
import { flushTracing, startTracing } from "./trace.ts";

export interface Listening {
  server: Server;
  port: number;
  /** Where a person on this machine reaches it. */
  url: string;
  close(): Promise<void>;
}

/** Listens on host:port (port 0 picks a free one) and resolves once it accepts connections. */
export function listen(app: Express, port: number, host = "0.0.0.0"): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once("error", reject);
    server.once("listening", () => {
      const address = server.address();
      const actual = typeof address === "object" && address !== null ? address.port : port;
      resolve({
        server,
        port: actual,
        url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${actual}`,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** On SIGINT/SIGTERM: stop consumers, finish in-flight work, close; a second signal exits now. */
export function onShutdown(stop: () => Promise<void>, log: Logger): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn(`second ${signal}: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log.info(`${signal}: shutting down`);
    // The spans still buffered for the exporter go before the process does.
    stop()
      .then(() => flushTracing().catch(() => {}))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error("shutdown failed", { error: String(error) });
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}

/**
 * A service's main: sets up tracing under the service's name, starts it and stops it on
 * SIGINT/SIGTERM (onShutdown); when it cannot start, logs why and exits with 1.
 */
export async function runService(
  name: string,
  start: () => Promise<{ stop(): Promise<void> }>,
  log: Logger,
): Promise<void> {
  startTracing(name);
  try {
    const service = await start();
    onShutdown(service.stop, log);
  } catch (error) {
    log.error("could not start", { error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}
