import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ENTRY_POINTS } from "../../infra/build.ts";
import { ROOT } from "../../infra/config.ts";
import { gateRefusal } from "../../lab/src/page/control-server.ts";
import { panelFigures, panelMoves } from "../../lab/src/page/readings.ts";

/**
 * Issue 47: the page's lab can kill processes, so it exists only under `npm start` and
 * `npm run start:broker`: never in a service started alone, the production image or
 * compose's services. And its gate refuses, in order, a forged Host, another Origin, no
 * token and a wrong one.
 */
const CONTROL = "lab/src/page/";

/** Every file of the project an entry point pulls in, as esbuild bundles it. */
async function filesOf(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  return Object.keys(result.metafile.inputs);
}

describe("Issue 47: the lab's control API exists only under npm start", () => {
  for (const [name, entry] of Object.entries(ENTRY_POINTS)) {
    it(`When ${name} is started alone (or bundled for the image), then no file of the lab's control API is in it`, async () => {
      const files = await filesOf(entry);
      expect(files.length).toBeGreaterThan(3);
      expect(files.filter((f) => f.includes(CONTROL))).toEqual([]);
    });
  }

  it("When npm start runs (infra/cli.ts), then the lab's control API is in it: the only way in", async () => {
    const files = await filesOf("infra/cli.ts");
    expect(files.some((f) => f.includes(`${CONTROL}control-server.ts`))).toBe(true);
  });

  it("When the production image and compose's services run, then none runs npm start or infra/cli.ts", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    const cmd = dockerfile.split("\n").filter((l) => /^(CMD|ENTRYPOINT)/.test(l));
    expect(cmd.length).toBeGreaterThan(0);
    for (const line of cmd) expect(line).not.toMatch(/infra\/cli|npm (run )?start|tsx/);
    const compose = parse(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as {
      services: Record<string, { command?: string[] | string; entrypoint?: string[] | string }>;
    };
    for (const [name, s] of Object.entries(compose.services)) {
      const run = [s.command ?? "", s.entrypoint ?? ""].flat().join(" ");
      expect(run, name).not.toMatch(/infra\/cli|npm (run )?start|lab\/src/);
    }
  });
});

describe("Issue 47: the control API's gate, one refusal at a time", () => {
  const gate = { port: 4321, token: "t0k3n", pageOrigins: ["http://localhost:5173"] };
  const ok = {
    host: "127.0.0.1:4321",
    origin: "http://localhost:5173",
    authorization: "Bearer t0k3n",
  };

  it("When every header is right, then the request passes, by 127.0.0.1 or by localhost", () => {
    expect(gateRefusal(ok, gate)).toBeNull();
    expect(gateRefusal({ ...ok, host: "localhost:4321" }, gate)).toBeNull();
  });

  it("When the Host is another name or port, then it is refused first, even with the token", () => {
    expect(gateRefusal({ ...ok, host: "attacker.example:4321" }, gate)?.erro).toBe("host-recusado");
    expect(gateRefusal({ ...ok, host: "127.0.0.1:80" }, gate)?.erro).toBe("host-recusado");
  });

  it("When the Origin is missing, another site's or another local port's, then it is refused", () => {
    for (const origin of [undefined, "https://attacker.example", "http://localhost:3000"])
      expect(gateRefusal({ ...ok, origin }, gate)?.erro, String(origin)).toBe("origem-recusada");
  });

  it("When the token is missing, empty or wrong, then it is refused 401 with a sentence", () => {
    expect(gateRefusal({ ...ok, authorization: undefined }, gate)).toMatchObject({
      status: 401,
      erro: "token-ausente",
    });
    expect(gateRefusal({ ...ok, authorization: "Bearer " }, gate)?.erro).toBe("token-ausente");
    expect(gateRefusal({ ...ok, authorization: "Bearer t0k3m" }, gate)?.erro).toBe(
      "token-recusado",
    );
    expect(gateRefusal({ ...ok, authorization: "Bearer t0k3n-and-more" }, gate)?.erro).toBe(
      "token-recusado",
    );
  });

  it("When the browser's preflight comes (no token), then the page's Origin is enough for it, and nothing else is", () => {
    const preflight = { host: ok.host, origin: ok.origin };
    expect(gateRefusal(preflight, gate, { preflight: true })).toBeNull();
    expect(
      gateRefusal({ ...preflight, origin: "https://attacker.example" }, gate, { preflight: true })
        ?.erro,
    ).toBe("origem-recusada");
  });
});

describe("Issue 47: what a story says moved on the panel", () => {
  const partition = (p: number, leader: number, isr: number[], lag: number) => ({
    partition: p,
    endOffset: 10,
    leader,
    replicas: [1, 2, 3],
    isr,
    grupos: [{ grupo: "pagamentos", committedOffset: 10 - lag, lag }],
  });
  const plataforma = (lag: number, isr: number[], members: [string, number[]][]) => ({
    topicos: [
      {
        topic: "pedidos-criados",
        particoes: [partition(0, 1, isr, lag), partition(1, 2, [1, 2, 3], 0)],
      },
    ],
    grupos: [
      {
        grupo: "pagamentos",
        estado: "Stable",
        membros: members.map(([c, ps]) => ({
          memberId: c,
          clientId: `payments-${c}`,
          host: "h",
          particoes: { "pedidos-criados": ps },
        })),
      },
    ],
    outbox: { pendentes: 0, maisAntigoEm: null, idadeMaisAntigoMs: 0, postosDeLado: [] },
    mortas: [{ topic: "pedidos-criados.dlq", origem: "pedidos-criados", cartas: 0 }],
    lidoEm: "2026-11-27T07:00:00.000Z",
  });

  it("When the lag, the in-sync replicas and the members changed, then one line says each, before → after", () => {
    const before = panelFigures(plataforma(0, [1, 2, 3], [["caixa-1", [0, 1]]]), "pagamentos");
    const after = panelFigures(
      plataforma(
        4,
        [1, 2],
        [
          ["caixa-1", [0]],
          ["caixa-2", [1]],
        ],
      ),
      "pagamentos",
    );
    expect(after).toMatchObject({ lag: 4, subReplicadas: 1, membros: "caixa-1: 0; caixa-2: 1" });
    expect(panelMoves(before, after)).toEqual([
      "No painel, partições por instância: caixa-1: 0, 1 → caixa-1: 0; caixa-2: 1.",
      "No painel, lag do grupo: 0 → 4.",
      "No painel, partições sub-replicadas: 0 → 1.",
    ]);
  });

  it("When nothing changed, or Kafka did not answer, then the story says so", () => {
    const same = panelFigures(plataforma(0, [1, 2, 3], [["caixa-1", [0, 1]]]), "pagamentos");
    expect(panelMoves(same, same)).toEqual(["No painel, nada mudou entre antes e depois."]);
    expect(panelMoves(null, same)[0]).toMatch(/antes, o Kafka não respondia/);
  });
});
