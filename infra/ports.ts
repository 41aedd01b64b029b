import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A TCP port nothing listens on now, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Linux hands out ports in this range as the local end of outgoing connections; a broker
 * told to listen on one of them fails to start whenever some client holds it (CI saw it).
 */
function ephemeralRange(): [number, number] {
  const file = "/proc/sys/net/ipv4/ip_local_port_range";
  if (!existsSync(file)) return [32768, 60999];
  const [low, high] = readFileSync(file, "utf8").trim().split(/\s+/).map(Number);
  return [low ?? 32768, high ?? 60999];
}

/** True when nothing listens on this port of 127.0.0.1 now. */
export const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

/**
 * Two consecutive ports free now (the broker's and its controller's), chosen at random
 * below the ephemeral range, so that two runs on one machine do not collide.
 */
export async function twoFreePorts(): Promise<number> {
  const [low] = ephemeralRange();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (low - 20_002));
    if ((await portIsFree(port)) && (await portIsFree(port + 1))) return port;
  }
  throw new Error("no two free ports below the ephemeral range");
}
