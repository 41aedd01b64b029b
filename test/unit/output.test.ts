import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readInfraConfig } from "../../infra/config.ts";
import { outputEnv, prefixOf, SHOPS } from "../../infra/services.ts";
import { logFormat } from "../../libs/service/src/logger.ts";

/**
 * Issue 18: under `npm start` every service's output reads well for a person (prefixed,
 * coloured on a terminal, one line per event, piped too) and is JSON for machines when
 * asked (LOG_FORMAT=json). `npm start`'s own runner (runServices) drives a small service that logs three
 * events, once on a real pseudo-terminal (util-linux `script`) and once through a pipe.
 */
const DRIVER = `
import { runServices } from ${JSON.stringify(join(ROOT, "infra/services.ts"))};
const shop = { title: "test", needsKafka: false, urls: () => ({}),
  services: [{ name: "falante", dir: "test/unit/fixtures/falante" }] };
process.exitCode = await runServices(shop, {}, (line) => console.log(line));
`;

function npmStartOf(onTerminal: boolean, env: Record<string, string> = {}): string[] {
  const command = `${process.execPath} --import tsx --input-type=module -e '${DRIVER}'`;
  const clean = { ...process.env, ...env };
  for (const name of ["LOG_FORMAT", "FORCE_COLOR", "NO_COLOR", "CI"]) {
    if (!(name in env)) delete clean[name];
  }
  const r = onTerminal
    ? spawnSync("script", ["-qec", command, "/dev/null"], { encoding: "utf8", env: clean })
    : spawnSync("sh", ["-c", command], { encoding: "utf8", env: clean });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split(/\r?\n/).filter((l) => l.includes("falante"));
}

const ESC = "\u001b";

describe("npm start reads well", () => {
  it("When npm start runs on a terminal, then each service's event is one line of text, prefixed with its name in colour, with no JSON object per line", () => {
    const lines = npmStartOf(true);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.startsWith(`${ESC}[36m[falante]${ESC}[39m `)).toBe(true);
      expect(line).not.toMatch(/\{"level"/);
    }
    const [listening, retry, pago] = lines as [string, string, string];
    expect(listening).toMatch(/INFO.*listening on http:\/\/127\.0\.0\.1:1/);
    // The error's stack stays on its event's line, escaped, instead of lines of its own.
    expect(retry).toMatch(/WARN.*a send failed; trying again.*Error: boom\\u000a {4}at send/);
    expect(pago).toMatch(/order PAGO.*"pedido":7/);
    // Colour on the level too: the service's output is a pipe, FORCE_COLOR carries it.
    expect(retry).toMatch(new RegExp(`${ESC}\\[3\\dm.*WARN`));
  }, 30_000);

  it("Issue 34: when npm start is piped (an editor's console, | tee), then each service's event is still one line of text for a person, prefixed, with no colour", () => {
    const lines = npmStartOf(false);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.startsWith("[falante] ")).toBe(true);
      expect(line).not.toContain(ESC);
      expect(line).not.toMatch(/\{"level"/);
    }
    const [listening, retry, pago] = lines as [string, string, string];
    expect(listening).toMatch(/INFO.*listening on http:\/\/127\.0\.0\.1:1/);
    expect(retry).toMatch(/WARN.*a send failed; trying again/);
    expect(pago).toMatch(/order PAGO.*"pedido":7/);
  }, 30_000);

  it("When LOG_FORMAT=json is given to a piped npm start, then each service's line is its JSON object, for tools", () => {
    const lines = npmStartOf(false, { LOG_FORMAT: "json" });
    expect(lines).toHaveLength(3);
    const events = lines.map((l) => JSON.parse(l.slice("[falante] ".length)));
    expect(events.map((e) => [e.level, e.msg])).toEqual([
      ["info", "listening on http://127.0.0.1:1"],
      ["warn", "a send failed; trying again"],
      ["info", "order PAGO"],
    ]);
    expect(events[2]).toMatchObject({ component: "falante", pedido: 7, por: "caixa-1" });
  }, 30_000);

  it("When LOG_FORMAT=json is given on a terminal, then the services write JSON for machines", () => {
    const lines = npmStartOf(true, { LOG_FORMAT: "json", NO_COLOR: "1" });
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(JSON.parse(line.slice("[falante] ".length)).msg).toBeTruthy();
  }, 30_000);

  it("When LOG_FORMAT is neither text nor json, then the program stops saying which values it takes", () => {
    expect(() => logFormat(1, { LOG_FORMAT: "yaml" })).toThrow(/LOG_FORMAT: expected text or json/);
    expect(logFormat(1, { LOG_FORMAT: "text" })).toBe("text");
  });

  it("When npm start chooses its services' settings, then a person's LOG_FORMAT, NO_COLOR and FORCE_COLOR win", () => {
    expect(outputEnv(true, {})).toEqual({ LOG_FORMAT: "text", FORCE_COLOR: "1" });
    expect(outputEnv(false, {})).toEqual({ LOG_FORMAT: "text" });
    expect(outputEnv(true, { LOG_FORMAT: "json" })).toEqual({ FORCE_COLOR: "1" });
    expect(outputEnv(true, { NO_COLOR: "1" })).toEqual({ LOG_FORMAT: "text" });
    expect(prefixOf("payments", 1, false)).toBe("[payments] ");
    expect(prefixOf("payments", 1, true)).toBe(`${ESC}[35m[payments]${ESC}[39m `);
  });

  it("Issue 47: when npm run start:broker starts, then it starts the page too, and on BROKER_CLUSTER_SIZE=3 its banner names the cluster's nodes and panels, not the machine's RabbitMQ", () => {
    expect(SHOPS.broker.services.map((s) => s.name)).toContain("web");
    const secrets = {
      BROKER_USER: "u",
      BROKER_PASSWORD: "p",
      BROKER_ADMIN_USER: "a",
      BROKER_ADMIN_PASSWORD: "p",
      BROKER_MONITOR_USER: "m",
      BROKER_MONITOR_PASSWORD: "p",
    };
    const one = SHOPS.broker.urls(readInfraConfig(secrets));
    expect(one.amqp).toBe("amqp://127.0.0.1:5672");
    const three = SHOPS.broker.urls(readInfraConfig({ ...secrets, BROKER_CLUSTER_SIZE: "3" }));
    expect(three.amqp).toBe("amqp://127.0.0.1:5682 amqp://127.0.0.1:5683 amqp://127.0.0.1:5684");
    expect(three["rabbitmq panels"]).toContain("http://127.0.0.1:15682");
    expect(JSON.stringify(three)).not.toMatch(/:5672|:15672/);
  });
});
