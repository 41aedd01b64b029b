import { type ParseArgsConfig, parseArgs } from "node:util";

/**
 * A command line's arguments (node:util parseArgs), or null when they do not parse: the
 * reason and the usage text are then printed to stderr, and the CLI exits with 2.
 */
export function lerArgumentos<T extends ParseArgsConfig>(
  config: T,
  uso: string,
): ReturnType<typeof parseArgs<T>> | null {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${uso}`);
    return null;
  }
}
