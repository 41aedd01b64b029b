import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Log } from "./config.ts";

/** The browser tests drive Debian's chromium with playwright-core (no browser download). */
export const CHROMIUM = "/usr/bin/chromium";

export function ensureChromium(log: Log): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.getuid?.() !== 0) {
    log(`browser: ${CHROMIUM} is missing; install it with \`sudo apt-get install chromium\``);
    return false;
  }
  log("browser: installing Debian's chromium for the browser tests (apt-get)...");
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
    const r = spawnSync("apt-get", args, {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.status !== 0) throw new Error(`browser: apt-get ${args.join(" ")} failed`);
  }
  return existsSync(CHROMIUM);
}
