import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lerAmbiente } from "../../src/config.ts";

const schema = z.object({
  PORTA: z.coerce.number().int().min(0).max(65535).default(8080),
  BROKER_PASSWORD: z.string({ error: "BROKER_PASSWORD is not set" }).min(1),
});

describe("Configuration from the environment (lerAmbiente)", () => {
  it("When every variable fits, then the typed values come back with the defaults filled in", () => {
    expect(lerAmbiente(schema, { BROKER_PASSWORD: "s" })).toEqual({
      PORTA: 8080,
      BROKER_PASSWORD: "s",
    });
  });

  it("When variables do not fit, then the error names each one and why, a line each", () => {
    expect(() => lerAmbiente(schema, { PORTA: "99999" })).toThrow(
      /^Invalid configuration:\n {2}PORTA: .*65535.*\n {2}BROKER_PASSWORD: BROKER_PASSWORD is not set$/,
    );
  });
});
