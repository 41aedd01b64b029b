import { z } from "zod";

/**
 * Control characters (C0, DEL, C1) and bidirectional overrides and isolates: refused in
 * text fields here, escaped by libs/service wherever a tool prints text it did not write.
 */
export const CONTROL_CHARACTERS = "[\\p{Cc}\\u202A-\\u202E\\u2066-\\u2069]";
const FORBIDDEN = new RegExp(CONTROL_CHARACTERS, "u");
const LONE_SURROGATE = /\p{Cs}/u;

/** The limits of each text field, in characters. */
export const TEXT_LIMITS = { cliente: 100, item: 100, clienteId: 100, sku: 64 } as const;

/**
 * Text a person typed (a client's name, an item, a SKU): what the shop accepts, stores,
 * sends in its messages and prints. Decided here once for every field and both editions:
 *  - trimmed, then 1 to `max` characters (Unicode code points);
 *  - no control characters (C0, DEL, C1: they drive terminals) and no bidirectional
 *    overrides or isolates (they make a line read in another order than it is stored);
 *  - well formed: no lone surrogate (it cannot be encoded as UTF-8);
 *  - normalised to NFC, so that one text typed composed or decomposed is stored once.
 * Unicode look-alikes ("Аna" with a Cyrillic А) are kept as typed: these fields are labels
 * a person reads, never identities the shop compares or keys on (see docs/decisions.md).
 */
export function freeText(max: number) {
  return (
    z
      .string({ error: "must be a string" })
      .refine((s) => !LONE_SURROGATE.test(s), { error: "must be valid Unicode text" })
      .overwrite((s) => s.trim().normalize("NFC"))
      .refine((s) => s.length > 0, { error: "must not be blank" })
      .refine((s) => !FORBIDDEN.test(s), { error: "must not contain control characters" })
      // Code points: never more than UTF-16 units, so only a long string needs counting.
      .refine((s) => s.length <= max || [...s].length <= max, {
        error: `must be at most ${max} characters`,
      })
      .meta({ maxLength: max })
  );
}

/**
 * Text freeText keeps as it is, told at a glance: printable Latin-1 (ASCII and U+00A0 to
 * U+00FF, each already NFC, none a control character), no space at either end, at most
 * `max` characters. Anything else goes through freeText's own checks (the FastPath of a
 * message, versao.ts).
 */
const PLAIN_TEXT =
  /^[\x21-\x7e\u00a1-\u00ff](?:[\x20-\x7e\u00a0-\u00ff]*[\x21-\x7e\u00a1-\u00ff])?$/;
export const isPlainText = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length <= max && PLAIN_TEXT.test(value);
