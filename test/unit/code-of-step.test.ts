import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../infra/config.ts";
import { BROKER_STEPS, EVENT_LOG_STEPS, FLOW_BOXES } from "../../web/src/codeOfStep.ts";
import { defines } from "../helpers/source.ts";

/**
 * Issue 47: each step of an order's timeline on the page names the code that did it. The
 * names are held to the code: each function is defined in its file (a rename or a move
 * fails here until the page says so), and every step the services write has its code.
 */
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/** The steps a service's source writes: `etapa: "x"`, insertStep(…, "x", …) and step("x", …). */
function stepsWritten(files: string[]): Set<string> {
  const steps = new Set<string>();
  for (const f of files) {
    const s = read(f);
    for (const m of s.matchAll(
      /etapa: "([a-z-]+)"|insertStep\([^,]+,\s*"([a-z-]+)"|step\("([a-z-]+)"/g,
    ))
      steps.add((m[1] ?? m[2] ?? m[3]) as string);
  }
  return steps;
}

describe("Issue 47: each timeline step names the code that did it, and the names are the code's", () => {
  for (const [edition, steps] of Object.entries({
    "event-log": EVENT_LOG_STEPS,
    broker: BROKER_STEPS,
    "picture's": FLOW_BOXES,
  })) {
    for (const [step, refs] of Object.entries(steps)) {
      it(`When the ${edition} page shows the step ${step}, then each function it names is defined in its file`, () => {
        expect(refs.length).toBeGreaterThan(0);
        for (const { file, fn } of refs)
          expect(defines(read(file), fn), `${file} · ${fn}`).toBe(true);
      });
    }
  }

  it("When the event-log orders API writes a timeline step, then the page names its code", () => {
    const written = stepsWritten([
      "orders-api/src/pedidos.ts",
      "orders-api/src/messaging/pedido-criado.ts",
      "orders-api/src/store/sqlite.ts",
      "orders-api/src/store/postgres.ts",
    ]);
    expect(written.size).toBeGreaterThan(3);
    for (const s of written) expect(EVENT_LOG_STEPS, s).toHaveProperty([s]);
  });

  it("When the broker edition's orders service writes a timeline step, then the page names its code", () => {
    const written = stepsWritten(["broker/orders/src/pedidos.ts"]);
    expect(written.size).toBe(4);
    for (const s of written) expect(BROKER_STEPS, s).toHaveProperty([s]);
  });

  it("When a function is named that the file does not define, then the check fails (it can)", () => {
    expect(defines(read("orders-api/src/pedidos.ts"), "createPedido")).toBe(true);
    expect(defines(read("orders-api/src/pedidos.ts"), "createPedid")).toBe(false);
  });
});
