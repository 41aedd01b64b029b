import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";

/** The repository's .env (git-ignored), created by `npm run setup` from .env.example. */
export const DOTENV_PATH = join(
  resolve(dirname(fileURLToPath(import.meta.url)), "../../.."),
  ".env",
);

/** Loads .env into process.env without overriding what the environment already sets. */
export function loadDotEnv(path = DOTENV_PATH): void {
  if (!existsSync(path)) return;
  for (const [name, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
    if (process.env[name] === undefined && value !== undefined) process.env[name] = value;
  }
}
