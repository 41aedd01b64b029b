import type { Server } from "node:http";
import express from "express";

/**
 * Serves a folder (a build of the web page) on a free port of 127.0.0.1; its origin. The
 * server is added to `servers`, for the file's afterAll to close.
 */
export async function serveFolder(servers: Server[], dir: string): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const s = express()
      .use(express.static(dir))
      .listen(0, "127.0.0.1", () => resolve(s));
  });
  servers.push(server);
  const a = server.address();
  return `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
}
