import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../infra/ports.ts";
import { scratchDir } from "../../infra/scratch.ts";

/**
 * A PostgreSQL server of a test's own, from the machine's PostgreSQL binaries, on a port
 * chosen free at run time: a test that stops the database stops this one, never the
 * machine's. initdb refuses to run as root, so as root it runs as the `postgres` user.
 */
export interface OwnPostgres {
  /** A database of its own on this server, owned by a login user, as DATABASE_URL. */
  databaseUrl: string;
  stop(): void;
  start(): void;
  /** Stops it and deletes its data. */
  remove(): void;
}

function binaries(): string {
  const root = "/usr/lib/postgresql";
  const version = existsSync(root)
    ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0]
    : undefined;
  if (!version) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  return join(root, version, "bin");
}

export async function ownPostgres(name: string): Promise<OwnPostgres> {
  const bin = binaries();
  const dir = mkdtempSync(join(scratchDir(), `pg-${name}-`));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot
    ? Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout)
    : undefined;
  const gid = asRoot
    ? Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout)
    : undefined;
  if (uid !== undefined && gid !== undefined) chownSync(dir, uid, gid);
  const run = (tool: string, args: string[]) => {
    const r = asRoot
      ? spawnSync("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], {
          encoding: "utf8",
        })
      : spawnSync(join(bin, tool), args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () =>
    run("pg_ctl", ["-D", data, "-o", options, "-w", "-l", join(dir, "log"), "start"]);
  // -m immediate: the server is gone at once, as a crash or a pulled cable leaves it.
  const stop = () => run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
  start();
  const admin = new pg.Client({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
  });
  await admin.connect();
  const user = `shop_${name.replace(/[^a-z0-9]/g, "")}`;
  const password = randomBytes(12).toString("hex");
  await admin.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE DATABASE pedidos OWNER ${user}`);
  await admin.end();
  return {
    databaseUrl: `postgres://${user}:${password}@127.0.0.1:${port}/pedidos`,
    stop,
    start,
    remove() {
      try {
        stop();
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
