import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { escapeControls } from "../../src/cli.ts";

const LOGGER = join(dirname(fileURLToPath(import.meta.url)), "../../src/logger.ts");

/**
 * Issue 14: text a service did not write (an item posted to the unauthenticated API, a
 * dead letter's reason) must not drive a person's terminal. The logger runs on a real
 * pseudo-terminal (util-linux `script`), where it pretty-prints.
 */
function naTela(script: string): string {
  const codigo = `import { createLogger } from ${JSON.stringify(LOGGER)}; ${script}`;
  const r = spawnSync(
    "script",
    ["-qec", `${process.execPath} --import tsx --input-type=module -e '${codigo}'`, "/dev/null"],
    { encoding: "latin1", timeout: 30_000, env: { ...process.env, NO_COLOR: "1" } },
  );
  return r.stdout;
}

describe("Untrusted text on a terminal", () => {
  it("When a control character or a bidi override is escaped, then it reads as its \\u escape and JSON still means the same", () => {
    expect(escapeControls("a\u001b[2Jb\u009bc\u202ed\u007f")).toBe(
      "a\\u001b[2Jb\\u009bc\\u202ed\\u007f",
    );
    const texto = "item\u009b31m";
    expect(JSON.parse(escapeControls(JSON.stringify(texto)))).toBe(texto);
    expect(escapeControls("caneca ☕ Ação")).toBe("caneca ☕ Ação");
  });

  it("When a pretty log line carries an escape sequence in its message or fields, then the terminal gets it escaped", () => {
    const tela = naTela(
      `const log = createLogger("t"); log.warn("item \\u001b]0;pwned\\u0007", { item: "\\u001b[2J", nested: { motivo: "a\\u009bb" } });`,
    );
    expect(tela).toContain("item \\u001b]0;pwned\\u0007");
    expect(tela).toContain("\\u001b[2J");
    expect(tela).toContain("a\\u009bb");
    expect(tela).not.toContain("\u001b]0;pwned");
    expect(tela).not.toContain("\u001b[2J");
    expect(tela).not.toContain("\u009b");
  });
});
