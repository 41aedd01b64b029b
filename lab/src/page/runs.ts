import { join } from "node:path";
import { z } from "zod";
import type { DashboardJson } from "../../../analytics/src/output.ts";
import { ROOT } from "../../../infra/config.ts";
import type { ShopProcesses } from "../../../infra/services.ts";
import { type AnyLabAction, anyAction, type Story } from "./session.ts";

/**
 * Two actions that run a program of the shop and show its output as it comes: the
 * analytics replay in a group of its own (as `GRUPO=auditoria npm run analytics`), and the
 * lab's experiments (as `npm run lab -- <name>`), each a process this npm start owns, so
 * that it ends with npm start if it is still running then.
 */

/** The experiments `npm run lab -- list` lists (lab/src/main.ts). */
export const EXPERIMENTS = [
  "rebalance",
  "kafka-down",
  "poison",
  "replay",
  "broker-course",
  "failover",
  "scale-out",
] as const;

const tsxArgs = (file: string, ...flags: string[]) => [
  "--import",
  "tsx",
  join(ROOT, file),
  ...flags,
];

export function replayAction(
  processes: ShopProcesses,
  kafka: { brokers: string; prefix: string },
): AnyLabAction {
  return anyAction<{ grupo: string }>({
    acao: "replay",
    rotulo: "Replay do analytics",
    resumo:
      "Roda o analytics num grupo novo (como GRUPO=auditoria): ele relê os dois tópicos do offset 0 e remonta o painel.",
    campos: [],
    params: z.object({
      grupo: z
        .string()
        .regex(/^[a-z0-9-]{1,40}$/, "1 a 40 letras minúsculas, dígitos ou hífens")
        .optional()
        .transform(
          (g) => g ?? `auditoria-${new Date().toISOString().slice(11, 19).replaceAll(":", "")}`,
        ),
    }) as unknown as z.ZodType<{ grupo: string }>,
    title: (p) => `Replay do analytics no grupo ${p.grupo}`,
    refusal: () => null,
    run: (p, story) => replayStory(processes, kafka, p.grupo, story),
  });
}

/** The analytics CLI in a new group until caught up; what its JSON counted, told in pt-BR. */
async function replayStory(
  processes: ShopProcesses,
  kafka: { brokers: string; prefix: string },
  grupo: string,
  story: Story,
) {
  story.before(
    `Um grupo que nunca leu nada (${grupo}) não tem offset confirmado: o analytics começa do offset 0 de pedidos-criados e pagamentos-resultados e remonta o painel do zero. O grupo analytics, e todos os outros, não se mexem: cada grupo tem seus offsets.`,
  );
  story.before(`Observe no painel o grupo ${grupo} aparecer, com seu lag caindo a zero.`);
  const out: string[] = [];
  const said: string[] = [];
  const started = Date.now();
  const run = processes.start(
    {
      name: grupo,
      dir: "analytics",
      args: tsxArgs("analytics/src/main.ts", "--until-caught-up", "--json", "--quiet"),
      env: {
        KAFKA_BROKERS: kafka.brokers,
        KAFKA_PREFIXO: kafka.prefix,
        GRUPO: grupo,
        LOG_FORMAT: "text",
        NO_COLOR: "1",
      },
    },
    `analytics-${grupo}`,
    // Its own lines (English, as the CLI's) stay in its log; the story tells in pt-BR
    // what its JSON counted, and quotes its last lines only if it failed.
    (line) => {
      if (line.startsWith("{") || out.length > 0) out.push(line);
      else said.push(line);
    },
  );
  story.line(
    `O analytics lê ${grupo} do offset 0 até o fim atual dos dois tópicos (o desenho mostra o lag caindo).`,
  );
  const code = await run.exited;
  if (code !== 0)
    return story.fail(`O analytics terminou com ${code}: ${said.slice(-3).join(" / ")}`);
  const d = JSON.parse(out.join("\n")) as DashboardJson;
  story.figure("registrosLidos", d.registrosLidos);
  story.figure("pedidosVistos", d.pedidosVistos);
  story.figure("pedidosPagos", d.pedidosPagos);
  story.after(
    `Em ${((Date.now() - started) / 1000).toFixed(1).replace(".", ",")} s o grupo ${grupo} leu ${d.registrosLidos} registros do offset 0 (${d.registrosInvalidos} inválidos).`,
  );
  story.after(
    `Painel remontado: ${d.pedidosVistos} pedidos vistos, ${d.pedidosPagos} pagos, receita ${d.receita.toFixed(2).replace(".", ",")}, mais vendido: ${d.maisVendido ? `${d.maisVendido.item} (${d.maisVendido.quantidade} unidades)` : "nenhum"}.`,
  );
}

export function experimentAction(processes: ShopProcesses): AnyLabAction {
  return anyAction<{ nome: string }>({
    acao: "experimento",
    rotulo: "Rodar experimento",
    resumo:
      "Roda um experimento do laboratório (npm run lab -- <nome>) numa loja própria, ao lado desta; as linhas e os PASS/FAIL aparecem aqui.",
    campos: [
      {
        nome: "nome",
        rotulo: "experimento",
        tipo: "escolha",
        opcoes: [...EXPERIMENTS],
        padrao: "rebalance",
      },
    ],
    params: z.object({ nome: z.enum(EXPERIMENTS) }),
    title: (p) => `Experimento ${p.nome}`,
    refusal: () => null,
    async run(p, story) {
      story.before(
        `O experimento ${p.nome} começa o que precisa (serviços com tópicos, grupos e bancos próprios; um broker que ele para é dele), conta o resultado do estado real e para tudo no fim.`,
      );
      let pass = 0;
      let fail = 0;
      const run = processes.start(
        {
          name: p.nome,
          dir: "lab",
          args: tsxArgs("lab/src/main.ts", p.nome, "--port", "0"),
          env: { NO_COLOR: "1" },
        },
        `lab-${p.nome}`,
        (line) => {
          if (line.startsWith("PASS ")) pass++;
          if (line.startsWith("FAIL ")) fail++;
          story.line(line);
        },
      );
      const code = await run.exited;
      story.figure("pass", pass);
      story.figure("fail", fail);
      if (code !== 0 || fail > 0 || pass === 0)
        story.fail(`${p.nome}: ${pass} PASS, ${fail} FAIL (saída ${code}).`);
      else story.after(`${p.nome}: ${pass} PASS, ${fail} FAIL.`);
    },
  });
}
