import { createServer } from "node:http";

/**
 * An OTLP/HTTP collector of a test's or a benchmark's own, on a free port: it answers
 * every export 200 and counts the trace exports that reach it (POST /v1/traces, protobuf)
 * and their bytes, keeping their bodies when asked (to look for a trace id in them).
 */
export async function otlpCollector({ keepBodies = false } = {}) {
  const bodies: Buffer[] = [];
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (keepBodies) chunks.push(chunk);
    });
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.headers["content-type"] === "application/x-protobuf") {
        exports++;
        bytes += size;
        if (keepBodies) bodies.push(Buffer.concat(chunks));
      }
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    /** The bodies of the exports so far (with keepBodies). */
    bodies,
    get exports() {
      return exports;
    },
    get bytes() {
      return bytes;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
