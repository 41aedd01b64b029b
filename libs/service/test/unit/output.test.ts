import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../src/index.ts";

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

  /**
   * A child whose stdout the test does not read until told: it writes `total` numbered
   * lines, far more than a pipe holds, and counts on stderr the writes the full pipe
   * refused (EAGAIN) and the timer turns it ran meanwhile.
   */
  function withSlowReader(script: string) {
    const codigo = `
      import fs from "node:fs";
      import { processOutput } from ${JSON.stringify(LOGGER)};
      const original = fs.writeSync;
      let recusadas = 0;
      fs.writeSync = (fd, ...resto) => {
        try { return original(fd, ...resto); }
        catch (e) { if (fd === 1 && e.code === "EAGAIN") recusadas++; throw e; }
      };
      const out = processOutput(1);
      const total = 20000;
      for (let i = 0; i < total; i++) out.write("linha " + i + " " + "x".repeat(90) + "\\n");
      const report = (what) => original(2, what + " recusadas=" + recusadas + "\\n");
      ${script}
    `;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", codigo],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const closed = new Promise((resolve) => child.stdout.once("close", resolve));
    return {
      stderr: () => stderr,
      /** Reads stdout from now on; resolves with its lines and the exit code. */
      async readAll() {
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (c: string) => {
          out += c;
        });
        const [code] = await Promise.all([exited, closed]);
        return { code, linhas: out.split("\n").filter(Boolean) };
      },
    };
  }

  const everyLine = Array.from({ length: 20000 }, (_, i) => `linha ${i} ${"x".repeat(90)}`);
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill("SIGKILL");
  });

  it("When the reader stops reading, then the service's event loop goes on, and every line arrives in order once it reads again", async () => {
    const child = withSlowReader(`
      let ticks = 0;
      const t = setInterval(() => {
        if (++ticks < 50) return;
        clearInterval(t);
        report("ticks=" + ticks);
        out.write("fim\\n");
      }, 5);
    `);
    // 50 timer turns ran while nothing was read and the pipe refused writes (with pino's
    // synchronous destination, the first refusal stopped the loop until the reader read).
    const seen = await waitFor(() => /ticks=50 recusadas=(\d+)/.exec(child.stderr()), {
      timeoutMs: 20_000,
      what: "the child's timer turns while its stdout is not read",
    });
    expect(Number(seen[1])).toBeGreaterThan(0);
    const { code, linhas } = await child.readAll();
    expect(code).toBe(0);
    expect(linhas).toEqual([...everyLine, "fim"]);
  }, 30_000);

  it("When the process exits with lines its reader has not taken yet, then it waits for the reader and every line arrives", async () => {
    const child = withSlowReader(`
      setTimeout(() => {
        report("saindo");
        process.exit(0);
      }, 20);
    `);
    const seen = await waitFor(() => /saindo recusadas=(\d+)/.exec(child.stderr()), {
      timeoutMs: 20_000,
      what: "the child to exit",
    });
    expect(Number(seen[1])).toBeGreaterThan(0);
    const { code, linhas } = await child.readAll();
    expect(code).toBe(0);
    expect(linhas).toEqual(everyLine);
  }, 30_000);
});
