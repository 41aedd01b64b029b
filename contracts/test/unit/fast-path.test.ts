import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  PedidoCriado,
  PedidoCriadoV1,
  pedidoCriadoV1Fast,
  ResultadoPagamento,
  ResultadoPagamentoV1,
  resultadoPagamentoV1Fast,
} from "../../src/event-log.ts";
import { quickYesOf } from "../../src/versao.ts";

/**
 * The quick yes of each message (versao.ts, FastPath) against its schema: it may leave any
 * message to the schema, but one it says yes to the schema accepts, with the same value,
 * key for key and in the same order.
 */

/** Texts near the edges of freeText and nonBlankText: plain, Latin-1, spaces, Unicode. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom("a", " ", "é", "\u00a0", "\u00ad", "ÿ", "~", "\t"),
    maxLength: 8,
  }),
  fc.constantFrom(
    "Ana",
    " Ana",
    "Ana ",
    "Jose\u0301",
    "José",
    "\u00a0Ana",
    "a\u0085b",
    "a\u202eb",
    "\ud800",
    "x".repeat(100),
    "x".repeat(101),
    "é".repeat(100),
    "é".repeat(101),
    "",
    " ",
  ),
);
/** Instants the shop writes, and the forms and dates the schema refuses or decides alone. */
const instant = fc.oneof(
  fc
    .date({ min: new Date("1970-01-01"), max: new Date("2999-12-31"), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc
    .tuple(
      fc.oneof(fc.integer({ min: 1896, max: 2404 }), fc.constantFrom(0, 400, 1600, 9996)),
      fc.oneof(fc.integer({ min: 0, max: 13 }), fc.constant(2)),
      fc.oneof(fc.integer({ min: 0, max: 32 }), fc.integer({ min: 28, max: 31 })),
      fc.integer({ min: 0, max: 25 }),
      fc.constantFrom(".123Z", "Z", ".1Z", "+00:00", ".123", ".123z"),
    )
    .map(
      ([y, mo, d, h, tail]) =>
        `${String(y).padStart(4, "0")}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")}T${String(h).padStart(2, "0")}:59:59${tail}`,
    ),
  fc.string({ maxLength: 30 }),
);
const whole = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, "1", null),
);
const amount = fc.oneof(
  fc.double(),
  fc.integer({ min: -1e6, max: 1e13 }).map((k) => k / 100),
  fc.integer({ min: 0, max: 1e6 }).map((k) => k / 1000),
  fc.constantFrom(0, 0.1 + 0.2, 1e-7, 1e9, 1e9 + 0.01, 18.9, "18.90", null),
);
const versao = fc.constantFrom<unknown>(1, 1, 1, 2, "1");
const extra = fc.option(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue()), {
  nil: undefined,
});

/** A valid message of each event, the one the generated messages change a field of. */
const VALID_CRIADO = {
  versao: 1,
  pedidoId: 7,
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  valor: 37.8,
  criadoEm: "2026-11-26T10:00:00.000Z",
};
const VALID_RESULTADO = {
  versao: 1,
  pedidoId: 7,
  status: "APROVADO",
  motivo: null,
  instancia: "caixa-1",
  processadoEm: "2026-11-26T10:00:03.000Z",
};

/**
 * Messages that are `valid` but for one field, drawn from its generator, or wrong in any
 * number of fields at once: a field the quick yes judges wrongly shows alone.
 */
function messages(valid: Record<string, unknown>, fields: Record<string, fc.Arbitrary<unknown>>) {
  const oneOff = Object.entries(fields).map(([name, field]) =>
    field.map((value) => ({ ...valid, [name]: value })),
  );
  return fc.oneof(...oneOff, fc.record(fields));
}

/**
 * Holds a quick yes to its schema over 10,000 generated messages (each with any other keys
 * too): whatever it accepts, the schema accepts, with the same JSON. It must answer over
 * 2,000 of them, or the property holds nothing.
 */
function holdsToSchema(
  fast: (m: Record<string, unknown>) => unknown,
  schema: typeof PedidoCriadoV1 | typeof ResultadoPagamentoV1,
  message: fc.Arbitrary<Record<string, unknown>>,
) {
  let answered = 0;
  fc.assert(
    fc.property(message, extra, (m, more) => {
      const sent = { ...more, ...m };
      const quick = fast(sent);
      if (quick === undefined) return;
      answered++;
      const checked = schema.safeParse(sent);
      expect(checked.success, JSON.stringify(sent)).toBe(true);
      expect(JSON.stringify(quick), JSON.stringify(sent)).toBe(JSON.stringify(checked.data));
    }),
    { numRuns: 10_000 },
  );
  expect(answered).toBeGreaterThan(2_000);
}

/**
 * Thousands of generated messages a test: a second or two alone, past vitest's 5 s default
 * beside a busy machine (a run beside a clean clone's suite timed one out). Not a bound on
 * anything the shop does: the time these tests may take.
 */
const PROPERTY_TIMEOUT_MS = 60_000;

describe("Decoding a message: the quick yes never differs from its schema (issue 36)", () => {
  it(
    "When any PedidoCriado is decoded, then the quick yes accepts only what PedidoCriadoV1 accepts, with its value",
    () => {
      const message = messages(VALID_CRIADO, {
        versao,
        pedidoId: whole,
        cliente: text,
        item: text,
        quantidade: fc.oneof(fc.integer({ min: -2, max: 52 }), whole),
        valor: amount,
        criadoEm: instant,
      });
      holdsToSchema(pedidoCriadoV1Fast, PedidoCriadoV1, message);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "When any ResultadoPagamento is decoded, then the quick yes accepts only what ResultadoPagamentoV1 accepts, with its value",
    () => {
      const message = messages(VALID_RESULTADO, {
        versao,
        pedidoId: whole,
        status: fc.constantFrom<unknown>("APROVADO", "RECUSADO", "PAGO", "aprovado", null),
        motivo: fc.oneof(text, fc.constantFrom(null, 1)),
        instancia: text,
        processadoEm: instant,
      });
      holdsToSchema(resultadoPagamentoV1Fast, ResultadoPagamentoV1, message);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "When the shop encodes an event, then the text is the schema's, with or without the quick yes, and what the schema refuses is refused",
    () => {
      const encodes = (
        contract: typeof PedidoCriado | typeof ResultadoPagamento,
        schema: typeof PedidoCriadoV1 | typeof ResultadoPagamentoV1,
        message: fc.Arbitrary<Record<string, unknown>>,
      ) => {
        let valid = 0;
        fc.assert(
          fc.property(message, extra, (m, more) => {
            const sent = { ...more, ...m };
            const checked = schema.safeParse(sent);
            if (!checked.success) {
              expect(() => contract.encode(sent as never), JSON.stringify(sent)).toThrow();
              return;
            }
            valid++;
            expect(contract.encode(sent as never), JSON.stringify(sent)).toBe(
              JSON.stringify(checked.data),
            );
          }),
          { numRuns: 5_000 },
        );
        expect(valid).toBeGreaterThan(1_000);
      };
      encodes(
        PedidoCriado,
        PedidoCriadoV1,
        messages(VALID_CRIADO, {
          versao,
          pedidoId: whole,
          cliente: text,
          item: text,
          valor: amount,
          criadoEm: instant,
        }),
      );
      encodes(
        ResultadoPagamento,
        ResultadoPagamentoV1,
        messages(VALID_RESULTADO, {
          motivo: fc.oneof(text, fc.constantFrom(null, 1)),
          instancia: text,
          processadoEm: instant,
        }),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it("When the shop's own events are decoded, then the quick yes answers them all; the rest still gets the schema's words", () => {
    for (let i = 0; i < 1000; i++) {
      const criado = {
        versao: 1,
        pedidoId: i + 1,
        cliente: `cliente ${i} – Zoë`,
        item: `item ${i % 17}`,
        quantidade: (i % 50) + 1,
        valor: ((i % 9999) + 1) / 100,
        criadoEm: new Date(1_700_000_000_000 + i * 86_400_000).toISOString(),
      };
      const resultado = {
        versao: 1,
        pedidoId: i + 1,
        status: i % 2 ? "APROVADO" : "RECUSADO",
        motivo: i % 2 ? null : "limite do cartão de teste",
        instancia: `caixa-${i % 3}`,
        processadoEm: criado.criadoEm,
      };
      // The en dash is outside Latin-1: this cliente is the schema's to decide.
      expect(pedidoCriadoV1Fast(criado)).toBeUndefined();
      expect(pedidoCriadoV1Fast({ ...criado, cliente: `cliente ${i} Zoë` })).toBeDefined();
      expect(resultadoPagamentoV1Fast(resultado)).toBeDefined();
      expect(PedidoCriado.decode(JSON.stringify(criado))).toEqual({ ok: true, value: criado });
      expect(ResultadoPagamento.decode(JSON.stringify(resultado))).toEqual({
        ok: true,
        value: resultado,
      });
    }
    const decomposed = PedidoCriado.decode(
      JSON.stringify({
        versao: 1,
        pedidoId: 1,
        cliente: " Jose\u0301 ",
        item: "caneca",
        quantidade: 1,
        valor: 1,
        criadoEm: "2024-02-29T10:00:00.000Z",
      }),
    );
    expect(decomposed).toMatchObject({ ok: true, value: { cliente: "José" } });
    const refused = PedidoCriado.decode(
      JSON.stringify({
        versao: 1,
        pedidoId: 1,
        cliente: "Ana",
        item: "caneca",
        quantidade: 1,
        valor: 1,
        criadoEm: "2023-02-29T10:00:00.000Z",
      }),
    );
    expect(refused).toMatchObject({ ok: false, error: { kind: "schema" } });
  });
});

describe("Issue 48: a quick yes is made from its schema (quickYesOf)", () => {
  const Probe = z.object({
    versao: z.literal(1),
    nome: z.string(),
    canal: z.string().optional(),
    total: z.number(),
  });
  const probeFast = quickYesOf(Probe, {
    versao: (v) => v === 1,
    nome: (v) => typeof v === "string",
    canal: (v) => v === undefined || typeof v === "string",
    total: (v) => typeof v === "number",
  });

  it("When an optional field is present or absent, then the quick yes gives the schema's value, key for key and in its order", () => {
    for (const m of [
      { versao: 1, nome: "a", canal: "web", total: 2, extra: true },
      { versao: 1, nome: "a", total: 2 },
    ]) {
      const quick = probeFast(m);
      expect(quick).toEqual(Probe.parse(m));
      expect(Object.keys(quick ?? {})).toEqual(Object.keys(Probe.parse(m)));
    }
    expect(probeFast({ versao: 1, nome: "a", canal: 3, total: 2 })).toBeUndefined();
  });

  it("When a field of the schema has no check, then it does not compile, and a check for a field the schema lacks is refused", () => {
    // @ts-expect-error canal, a field of the schema, has no check: the compiler says so.
    quickYesOf(Probe, { versao: () => true, nome: () => true, total: () => true });
    expect(() =>
      quickYesOf(Probe, {
        versao: () => true,
        nome: () => true,
        canal: () => true,
        total: () => true,
        // @ts-expect-error not a field of the schema
        sobra: () => true,
      }),
    ).toThrow(/sobra/);
  });
});
