import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
 * A port nothing listens on now, for a broker or database a test or the lab starts (and
 * may stop and start again): chosen as twoFreePorts chooses.
 */
export const freePort = (): Promise<number> => freePorts(1);

/** Two consecutive ports free now: a Kafka node's listener and its controller's. */
export const twoFreePorts = (): Promise<number> => freePorts(2);

/**
 * Where a port handed out is noted, a file per port, for every process of this machine: the
 * test files run in several processes at once, and two of them could pick the same free
 * port before either listens on it.
 */
const RESERVED = join(tmpdir(), "shop-ports");
/** A note older than this is forgotten: no test or lab world keeps a port longer. */
const RESERVED_FOR_MS = 3_600_000;
let forgotAt = 0;

/**
 * `count` consecutive ports, free now, chosen at random below the ephemeral range (not
 * the kernel's choice, which is in it: a RabbitMQ node stopped and started again found its
 * management port taken by a client's connection, CI 2026-11-29), and not handed out by any
 * process of this machine in the last hour (RESERVED). Returns the first.
 */
async function freePorts(count: number): Promise<number> {
  const [low] = ephemeralRange();
  // A machine whose ephemeral range begins low: any port up from 20,000 then.
  const top = low > 21_000 ? low : 65_536;
  mkdirSync(RESERVED, { recursive: true });
  forgetOldNotes();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (top - 20_000 - count));
    const ports = Array.from({ length: count }, (_, i) => port + i);
    if (!note(ports)) continue;
    if ((await Promise.all(ports.map(portIsFree))).every(Boolean)) return port;
  }
  throw new Error(`no ${count} free port(s) below the ephemeral range (${low})`);
}

/** Notes every one of the ports as handed out, or none when another process has one. */
function note(ports: number[]): boolean {
  const made: string[] = [];
  for (const port of ports) {
    const file = join(RESERVED, String(port));
    try {
      closeSync(openSync(file, "wx"));
      made.push(file);
    } catch {
      for (const f of made) rmSync(f, { force: true });
      return false;
    }
  }
  return true;
}

/** At most once a minute: the notes older than RESERVED_FOR_MS are removed. */
function forgetOldNotes(): void {
  const now = Date.now();
  if (now - forgotAt < 60_000) return;
  forgotAt = now;
  for (const name of readdirSync(RESERVED)) {
    const file = join(RESERVED, name);
    try {
      if (now - statSync(file).mtimeMs > RESERVED_FOR_MS) rmSync(file, { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}
