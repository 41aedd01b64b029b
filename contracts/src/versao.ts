import type { z } from "zod";

/**
 * Every message carries `versao`. A consumer decodes it through one of these, which
 * refuses a version it does not know instead of interpreting it.
 */
export type DecodeFailure =
  | { kind: "json"; reason: string }
  | { kind: "versao"; reason: string; versao: unknown }
  | { kind: "schema"; reason: string; issues: z.core.$ZodIssue[] };

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: DecodeFailure };

export interface MessageContract<T, In = T> {
  readonly name: string;
  readonly versions: readonly number[];
  readonly current: number;
  decode(raw: string | Buffer | Uint8Array | null | undefined): Decoded<T>;
  /**
   * Validates an object built by our own code and returns the JSON text to send. It takes
   * the schema's input: a field with a default may be left out, and gets it here.
   */
  encode(message: In): string;
}

/**
 * A quick yes for a version of a message: given its parsed JSON, the value its schema would
 * give, when the message is plainly valid (plain Latin-1 text, safe whole numbers, amounts,
 * the shop's own UTC instants); undefined for anything else, which the schema then decides
 * and words. It never says yes to what the schema refuses and gives the schema's own value:
 * contracts/test/unit/fast-path.test.ts holds each one to its schema on generated messages.
 * Every record of a replay is decoded, and the schema's checks were most of that cost.
 */
export type FastPath<T> = (parsed: Record<string, unknown>) => T | undefined;

/** One field's quick check: true when the field's schema takes the value as it is. */
export type FieldCheck = (value: unknown) => boolean;

/**
 * A version's quick yes, made from its schema and one check per field. The checks are keyed
 * by the schema's own fields, every one required: a field added to the schema and not here
 * fails typecheck (an optional field too: its check says what it may be, `undefined`
 * included). The value is built in the schema's order from the schema's keys, so the fields
 * are written in two places, the schema and its checks, and the compiler holds them equal.
 */
export function quickYesOf<S extends z.ZodObject>(
  schema: S,
  checks: { [K in keyof z.output<S>]-?: FieldCheck },
): FastPath<z.output<S>> {
  const fields = Object.keys(schema.shape);
  const checkOf = checks as Record<string, FieldCheck>;
  const extra = Object.keys(checkOf).filter((f) => !fields.includes(f));
  if (extra.length > 0) throw new Error(`quick checks for fields the schema lacks: ${extra}`);
  return compileQuickYes(
    fields,
    fields.map((f) => checkOf[f] as FieldCheck),
    fields.filter((f) => schema.shape[f]?.safeParse(undefined).success === true),
  );
}

/**
 * The quick yes as straight-line code, one line per field, as one would write it by hand:
 * a loop over the checks read a replay's records a third slower (npm run bench --
 * --only=decode: 0.52 of bare JSON.parse against 0.72), for each call site then saw every
 * check. The fields' names are the schema's own keys, written into the code as JSON
 * strings; the checks are passed in, never written as text.
 */
function compileQuickYes<T>(
  fields: string[],
  checks: FieldCheck[],
  optional: string[],
): FastPath<T> {
  const name = (f: string) => JSON.stringify(f);
  const lines = fields.map(
    (f, i) => `const v${i} = m[${name(f)}]; if (!c[${i}](v${i})) return undefined;`,
  );
  // The value's keys in the schema's order, as zod gives them: the fields before the first
  // optional one in one literal, each later one in turn (an optional one when present).
  const firstOptional = fields.findIndex((f) => optional.includes(f));
  const head = firstOptional < 0 ? fields : fields.slice(0, firstOptional);
  const build = `const value = { ${head.map((f, i) => `${name(f)}: v${i}`).join(", ")} };`;
  const optionals = fields.slice(head.length).map((f, j) => {
    const i = head.length + j;
    const set = `value[${name(f)}] = v${i};`;
    return optional.includes(f) ? `if (v${i} !== undefined) ${set}` : set;
  });
  const body = [...lines, build, ...optionals, "return value;"].join("\n");
  return new Function("c", `return (m) => {\n${body}\n};`)(checks) as FastPath<T>;
}

export function defineMessage<S extends z.ZodType>(
  name: string,
  schemasByVersion: Record<number, S>,
  fastByVersion: Record<number, FastPath<z.output<S>>> = {},
): MessageContract<z.output<S>, z.input<S>> {
  const versions = Object.keys(schemasByVersion)
    .map(Number)
    .sort((a, b) => a - b);
  const current = versions[versions.length - 1] as number;

  function decode(raw: string | Buffer | Uint8Array | null | undefined): Decoded<z.output<S>> {
    if (raw === null || raw === undefined) {
      return { ok: false, error: { kind: "json", reason: `${name}: empty message` } };
    }
    // A Buffer (what Kafka clients give) is read where it is: Buffer.from(buffer) would copy
    // every record first, which on a replay of a million records was garbage for nothing.
    const text =
      typeof raw === "string"
        ? raw
        : Buffer.isBuffer(raw)
          ? raw.toString("utf8")
          : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return {
        ok: false,
        error: { kind: "json", reason: `${name}: not JSON (${(e as Error).message})` },
      };
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return { ok: false, error: { kind: "json", reason: `${name}: not a JSON object` } };
    }
    const versao = (parsed as { versao?: unknown }).versao;
    const schema = typeof versao === "number" ? schemasByVersion[versao] : undefined;
    if (schema === undefined) {
      return {
        ok: false,
        error: {
          kind: "versao",
          versao,
          reason: `${name}: unknown versao ${JSON.stringify(versao)}; this reader knows ${versions.join(", ")}`,
        },
      };
    }
    const quick = fastByVersion[versao as number]?.(parsed as Record<string, unknown>);
    if (quick !== undefined) return { ok: true, value: quick };
    const result = schema.safeParse(parsed);
    if (!result.success) {
      return {
        ok: false,
        error: {
          kind: "schema",
          issues: result.error.issues,
          reason: `${name}: ${describeIssues(result.error.issues)}`,
        },
      };
    }
    return { ok: true, value: result.data };
  }

  // Our own messages are plainly valid: the current version's quick yes takes them without
  // the schema's checks, and the schema still decides (and words) anything it does not.
  const quickCurrent = fastByVersion[current];
  function encode(message: z.input<S>): string {
    const quick = quickCurrent?.(message as Record<string, unknown>);
    if (quick !== undefined) return JSON.stringify(quick);
    const schema = schemasByVersion[current] as S;
    return JSON.stringify(schema.parse(message));
  }

  return { name, versions, current, decode, encode };
}

export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "(body)"} ${i.message}`)
    .join("; ");
}
