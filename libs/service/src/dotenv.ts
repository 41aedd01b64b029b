import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";

/**
 * The repository's root: the nearest folder up from this code that holds package-lock.json.
 * Found by walking up, because this file runs both from libs/service/src (tsx) and bundled
 * into dist/ (npm run build).
 */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package-lock.json"))) {
    const above = resolve(dir, "..");
    if (above === dir) return process.cwd();
    dir = above;
  }
  return dir;
}

/** The repository's .env (git-ignored), created by `npm run setup` from .env.example. */
export const DOTENV_PATH = join(projectRoot(), ".env");

/** Loads .env into process.env without overriding what the environment already sets. */
export function loadDotEnv(path = DOTENV_PATH): void {
  if (!existsSync(path)) return;
  for (const [name, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
    if (process.env[name] === undefined && value !== undefined) process.env[name] = value;
  }
}
