import { type ParseArgsConfig, parseArgs } from "node:util";
import { CONTROL_CHARACTERS } from "@shop/contracts";

/**
 * A command line's arguments (node:util parseArgs), or null when they do not parse: the
 * reason and the usage text are then printed to stderr, and the CLI exits with 2.
 */
export function readArguments<T extends ParseArgsConfig>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>> | null {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return null;
  }
}

/** The characters text fields refuse (contracts' CONTROLES), found anywhere in a text. */
const CONTROL_CHARACTERS_GLOBAL = new RegExp(CONTROL_CHARACTERS, "gu");

/**
 * Text a CLI or a pretty log prints but did not write itself (an item, a dead letter's
 * reason or headers, a client id), made safe for a terminal: each control character or
 * bidirectional override becomes its `\uXXXX` escape, so no escape sequence it carries can
 * move the cursor, recolour, retitle or clear the screen, or reorder the line. Inside a
 * JSON string the result is still valid JSON meaning the same text.
 */
export function escapeControls(text: string): string {
  return text.replace(
    CONTROL_CHARACTERS_GLOBAL,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}
