import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const LOGGER = join(dirname(fileURLToPath(import.meta.url)), "../../src/logger.ts");

/**
 * Runs a script in a child process whose stdout is a pipe, as a service's is under a
 * supervisor or a test. Every fs.writeSync to fd 1 is counted, and the count is printed to
 * stderr when the process ends.
 */
function correr(script: string) {
  const codigo = `
    import fs from "node:fs";
    import { createLogger, processOutput } from ${JSON.stringify(LOGGER)};
    const original = fs.writeSync;
    let escritas = 0;
    fs.writeSync = (fd, ...resto) => { if (fd === 1) escritas++; return original(fd, ...resto); };
    process.on("exit", () => process.stderr.write("escritas=" + escritas));
    ${script}
  `;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", codigo], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return {
    linhas: r.stdout.split("\n").filter(Boolean),
    escritas: Number(/escritas=(\d+)/.exec(r.stderr)?.[1] ?? -1),
    stderr: r.stderr,
  };
}

describe("Process output (processOutput): a service's lines under load", () => {
  it("When a turn prints many lines and log lines, then they go out in order in one write", () => {
    const r = correr(`
      const log = createLogger("teste");
      const out = processOutput(1);
      for (let i = 0; i < 500; i++) {
        out.write("linha " + i + "\\n");
        log.info("registro " + i);
      }
      setTimeout(() => {}, 50);
    `);
    expect(r.linhas).toHaveLength(1000);
    for (let i = 0; i < 500; i++) {
      expect(r.linhas[2 * i]).toBe(`linha ${i}`);
      expect(JSON.parse(r.linhas[2 * i + 1] as string)).toMatchObject({ msg: `registro ${i}` });
    }
    expect(r.escritas).toBe(1);
  });

  it("When lines are printed in separate turns, then each turn's lines appear before the next turn runs", () => {
    const r = correr(`
      const out = processOutput(1);
      out.write("primeira\\n");
      setTimeout(() => { out.write("segunda\\n"); }, 20);
    `);
    expect(r.linhas).toEqual(["primeira", "segunda"]);
    expect(r.escritas).toBe(2);
  });

  it("When the process exits in the same turn as it printed, then the lines are still written", () => {
    const r = correr(`
      createLogger("teste").error("could not start");
      process.exit(1);
    `);
    expect(r.linhas).toHaveLength(1);
    expect(JSON.parse(r.linhas[0] as string)).toMatchObject({
      level: "error",
      msg: "could not start",
    });
  });
});
