import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Six hex digits that tell this checkout from another on the same machine (a second
 * clone, CI's clean clone beside yours): taken from its folder's path.
 */
export function checkoutId(root = ROOT): string {
  return createHash("sha256").update(resolve(root)).digest("hex").slice(0, 6);
}

/**
 * Where the tests and the lab's experiments keep what they make for themselves and delete
 * after: the databases of the services they start, the data of their own Kafka brokers,
 * RabbitMQ nodes and PostgreSQL servers. SHOP_SCRATCH_DIR, else the system's temporary
 * folder. The checkout's own brokers (npm start's) always keep theirs on disk.
 */
export const scratchDir = (): string => process.env.SHOP_SCRATCH_DIR || tmpdir();

/** What the scratch folder of a test run needs free: its brokers' logs and databases. */
const NEEDED_BYTES = 4 * 1024 ** 3;

/**
 * A test run's scratch folder in memory, /dev/shm/shop-<checkout id>-<the run's pid>; null
 * where /dev/shm is missing or has less than 4 GB free. What runs of this checkout that
 * ended without deleting theirs (killed, say) left is deleted first (forgetEndedRuns).
 *
 * Why in memory: on a 2-core machine whose disk took a few hundred fsyncs a second, the
 * suite's own fsyncs (every SQLite commit of the services it starts, its RabbitMQ nodes'
 * write-ahead logs, its brokers' metadata) queued behind each other: a 4 KiB fsync took
 * 7.7 ms at the median, 168 ms at the 99th percentile and up to 328 ms during a run, 0.3 ms
 * alone (2026-12-01), and every request that waits for a commit waited that long. A test
 * kills processes, never the machine: what a process wrote survives its kill -9 in memory
 * as on disk, so every fault still proves what it proved. The benchmarks run on disk.
 *
 * Why one a run: every run of a checkout once shared one folder and emptied it at its start
 * and end, so `npx vitest run --project unit` in a second terminal deleted the databases
 * and brokers' data of a fault run in progress (its failover lab then waited 30 s for a
 * cluster whose folders were gone).
 */
export function inMemoryScratch(root = ROOT): string | null {
  const shm = "/dev/shm";
  if (!existsSync(shm)) return null;
  try {
    const fs = statfsSync(shm);
    if (fs.bavail * fs.bsize < NEEDED_BYTES) return null;
  } catch {
    return null;
  }
  forgetEndedRuns(root, shm);
  const dir = inMemoryScratchPath(root);
  mkdirSync(dir, { recursive: true });
  // As /tmp: the RabbitMQ and PostgreSQL servers a test starts run as their own users.
  chmodSync(dir, 0o1777);
  return dir;
}

/** The folder inMemoryScratch makes for this run of this checkout (and the run's end deletes). */
export const inMemoryScratchPath = (root = ROOT, shm = "/dev/shm") =>
  join(shm, `shop-${checkoutId(root)}-${process.pid}`);

/** Deletes the run's in-memory scratch folder, if this run made one (the end of `npm test`). */
export function forgetInMemoryScratch(root = ROOT): void {
  if (process.env.SHOP_SCRATCH_DIR === inMemoryScratchPath(root))
    rmSync(inMemoryScratchPath(root), { recursive: true, force: true });
}

/**
 * Deletes, in `shm`, the scratch folders of this checkout's runs whose process has ended,
 * and the one folder all its runs shared before; another run's, alive, is left alone.
 */
export function forgetEndedRuns(root: string, shm: string): void {
  const prefix = `shop-${checkoutId(root)}`;
  for (const name of readdirSync(shm)) {
    const pid = name.startsWith(`${prefix}-`) ? Number(name.slice(prefix.length + 1)) : Number.NaN;
    if (name === prefix || (Number.isInteger(pid) && !alive(pid)))
      rmSync(join(shm, name), { recursive: true, force: true });
  }
}

/** Whether a process runs (one of another user's answers EPERM: it runs). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
