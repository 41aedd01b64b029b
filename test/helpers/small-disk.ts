import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A filesystem of the test's own, `sizeMb` large (a tmpfs mounted on a temporary folder;
 * root only, as on our CI machines), that the test can fill to the last byte and free
 * again: a disk full for whatever keeps its files there.
 */
export function smallDisk(sizeMb: number) {
  if (process.getuid?.() !== 0)
    throw new Error("smallDisk: mounting a tmpfs needs root (the CI machines run as root)");
  const dir = mkdtempSync(join(tmpdir(), "small-disk-"));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir], {
    encoding: "utf8",
  });
  if (mount.status !== 0) throw new Error(`smallDisk: mount failed: ${mount.stderr}`);
  const ballast = join(dir, "ballast");
  return {
    dir,
    /** Writes a file until the filesystem refuses (ENOSPC): nothing else can grow. */
    fill(): number {
      const fd = openSync(ballast, "a");
      const chunk = Buffer.alloc(64 * 1024);
      let written = 0;
      try {
        for (;;) written += writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        closeSync(fd);
      }
      // What a 64 KiB chunk could not take: the rest in 512-byte pieces.
      const small = openSync(ballast, "a");
      try {
        for (;;) written += writeSync(small, Buffer.alloc(512));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        closeSync(small);
      }
      return written;
    },
    /** Deletes what fill() wrote: the space is back. */
    free(): void {
      rmSync(ballast, { force: true });
    },
    dispose(): void {
      spawnSync("umount", ["-l", dir]);
      rmdirSync(dir);
    },
  };
}
