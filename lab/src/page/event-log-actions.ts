import type { KafkaNames } from "@shop/contracts";
import { pedidoKey } from "@shop/contracts";
import { deadLetterCounts, HEARTBEAT_MS } from "@shop/kafka";
import { z } from "zod";
import { placeOrder } from "../../../harness/http.ts";
import { clientOf, withAdmin } from "../../../harness/kafka.ts";
import {
  type ClusterSettings,
  clusterNode,
  kafkaAnswers,
  kafkaStartedByInfra,
  startKafka,
  startKafkaCluster,
  stopKafka,
} from "../../../infra/kafka/kafka.ts";
import { kafkaUsers } from "../../../infra/kafka/users.ts";
import type { Service, ShopProcesses } from "../../../infra/services.ts";
import {
  describeHolders,
  type Holders,
  type OrdersDb,
  panelFigures,
  panelMoves,
  readPanel,
  seconds,
  settled,
  waitForHolders,
} from "./readings.ts";
import { type AnyLabAction, anyAction, type LabAction, type Story } from "./session.ts";

/**
 * The event-log edition's actions on the page: payments instances started, stopped, killed
 * and paused; the shop's Kafka stopped, killed and started; a poison record; a burst of
 * orders. Each tells before what it does and what to watch, and after what happened,
 * counted from Kafka's group description, the orders database and the panel's own reading.
 */
export interface EventLogShop {
  processes: ShopProcesses;
  /** How a payments instance is started (payments/, INSTANCIA and PORTA set). */
  paymentsService(instancia: string): Service;
  ordersUrl: string;
  db: OrdersDb;
  brokers: string;
  names: KafkaNames;
  /** The single Kafka broker this checkout's infra runs (its instance and address). */
  kafka: {
    instance: string;
    settings: Parameters<typeof startKafka>[0];
    /** On KAFKA_NODES=3: the cluster infra runs (its name and nodes); null on one broker. */
    cluster: { name: string; settings: ClusterSettings } | null;
  };
  /** The consumers' session timeout and the decision's wait (the spec's 3 s). */
  sessionMs: number;
  decisionMs: number;
  /** How long POST /pedidos waits for Kafka before answering 500 (CONFIRMACAO_MS). */
  confirmMs: number;
}

export const INSTANCES = ["caixa-1", "caixa-2", "caixa-3"] as const;
const instancia = z.enum(INSTANCES);
const instanceField = (padrao: string) => ({
  nome: "instancia",
  rotulo: "instância",
  tipo: "escolha" as const,
  opcoes: [...INSTANCES],
  padrao,
});

/** The orders placed from `afterId` on that are still waiting after every decision settles. */
async function waitDecided(shop: EventLogShop, afterId: number, story: Story, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let waiting = await shop.db.waiting(afterId);
  while (waiting > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    waiting = await shop.db.waiting(afterId);
  }
  if (waiting > 0) story.line(`${waiting} pedidos ainda aguardavam ${seconds(timeoutMs)} depois.`);
  return waiting;
}

const figuresOf = async (shop: EventLogShop) => {
  const p = await readPanel(shop.ordersUrl);
  return p && panelFigures(p, shop.names.groups.pagamentos);
};

/**
 * The common end of a story about payments: orders lost and decided twice, from the orders
 * database, and what moved on the panel.
 */
async function tellOutcome(
  shop: EventLogShop,
  story: Story,
  from: { lastId: number; repeated: number; panel: Awaited<ReturnType<typeof figuresOf>> },
) {
  if (!(await kafkaAnswers(shop.kafka.settings, 2000))) {
    story.after(
      "O Kafka está fora: os pedidos esperam por ele, e a ação Iniciar o Kafka conta o resto.",
    );
    return;
  }
  const lost = await waitDecided(shop, from.lastId, story);
  const twice = (await shop.db.repeatedResults()) - from.repeated;
  story.figure("pedidosPerdidos", lost);
  story.figure("decididosDuasVezes", twice);
  story.after(
    `Pedidos perdidos: ${lost}. Decididos duas vezes: ${twice}${twice > 0 ? " (a API de pedidos recebeu o resultado de novo e o ignorou: at-least-once, absorvido pela idempotência)" : ""}.`,
  );
  // The panel's reading is kept for a second by the orders API: one after this story's end.
  await new Promise((r) => setTimeout(r, 1100));
  for (const line of panelMoves(from.panel, await figuresOf(shop))) story.after(line);
}

async function startingPoint(shop: EventLogShop) {
  return {
    lastId: await shop.db.lastId(),
    repeated: await shop.db.repeatedResults(),
    panel: await figuresOf(shop),
  };
}

const holdersOf = (
  shop: EventLogShop,
  ok: (h: Holders) => boolean,
  timeoutMs?: number,
  seen?: (h: Holders, at: number) => void,
) =>
  waitForHolders(
    shop.brokers,
    shop.names.groups.pagamentos,
    shop.names.topics.pedidosCriados,
    ok,
    timeoutMs,
    seen,
  );

const notRunning = (shop: EventLogShop, name: string) =>
  shop.processes.running(name)
    ? null
    : shop.processes.all().some((p) => p.name === name)
      ? `${name} não está rodando agora (já parou).`
      : `${name} não foi iniciado por este npm start: o laboratório só age nos processos que ele mesmo iniciou.`;

/** Iniciar instância: a payments instance joins the group; how long until it held partitions. */
function startPaymentsAction(shop: EventLogShop): LabAction<{ instancia: string }> {
  const group = shop.names.groups.pagamentos;
  return {
    acao: "iniciar-pagamentos",
    rotulo: "Iniciar instância",
    resumo:
      "Uma instância de pagamentos entra no grupo `pagamentos`: o Kafka redistribui as 3 partições.",
    campos: [instanceField("caixa-2")],
    params: z.object({ instancia }),
    title: (p) => `Iniciar ${p.instancia}`,
    refusal: (p) =>
      shop.processes.running(p.instancia) ? `${p.instancia} já está rodando.` : null,
    async run(p, story) {
      const from = await startingPoint(shop);
      const before = await holdersOf(shop, () => true).catch(() => null);
      story.before(
        `${p.instancia} vai entrar no grupo ${group}. Cada partição de pedidos-criados é lida por uma só instância: o coordenador do grupo pede a todos que entrem de novo (rebalance) e divide as partições.`,
      );
      story.before(
        "Observe no painel a tabela do grupo pagamentos: quem segura cada partição, e o estado do grupo.",
      );
      const started = Date.now();
      shop.processes.start(shop.paymentsService(p.instancia), p.instancia);
      const { holders, at } = await holdersOf(
        shop,
        (h) => settled(h) && (h.byInstance.get(p.instancia)?.length ?? 0) > 0,
      );
      story.figure("segundosAteParticoesMudarem", (at - started) / 1000);
      story.after(
        `Em ${seconds(at - started)} ${p.instancia} segurava partições: ${before ? describeHolders(before.holders) : "?"} → ${describeHolders(holders)}.`,
      );
      story.after(
        "Esse tempo inclui iniciar o processo (Node, tsx) e o rebalance: as outras instâncias terminam a decisão que tinham em mãos antes de devolver partições.",
      );
      await tellOutcome(shop, story, from);
    },
  };
}

/** Parar (Ctrl-C) and Matar (kill -9): an instance leaves the group, politely or not. */
function leaveAction(
  shop: EventLogShop,
  acao: string,
  signal: "SIGTERM" | "SIGKILL",
  rotulo: string,
  why: string,
): LabAction<{ instancia: string }> {
  return {
    acao,
    rotulo,
    resumo: why,
    campos: [instanceField("caixa-2")],
    params: z.object({ instancia }),
    title: (p) => `${rotulo} ${p.instancia}`,
    refusal: (p) => notRunning(shop, p.instancia),
    run: (p, story) => leaveStory(shop, p, signal, why, story),
  };
}

/** The signal sent; how long until the others held the instance's partitions, and why that long. */
async function leaveStory(
  shop: EventLogShop,
  p: { instancia: string },
  signal: "SIGTERM" | "SIGKILL",
  why: string,
  story: Story,
) {
  const from = await startingPoint(shop);
  const others = shop.processes
    .all()
    .filter(
      (x) =>
        x.name !== p.instancia &&
        shop.processes.running(x.name) &&
        INSTANCES.includes(x.name as never),
    );
  story.before(why);
  story.before(
    others.length === 0
      ? "Nenhuma outra instância roda: as partições ficam sem leitor e os pedidos novos esperam (o lag cresce no painel)."
      : "Observe no painel quem segura cada partição e o lag do grupo pagamentos.",
  );
  const started = Date.now();
  shop.processes.signal(p.instancia, signal);
  await shop.processes.running(p.instancia)?.exited;
  story.line(`${p.instancia} terminou ${seconds(Date.now() - started)} depois do sinal.`);
  if (others.length === 0) {
    story.figure("segundosAteParticoesMudarem", -1);
    story.after("Sem outra instância, ninguém lê pedidos-criados até uma ser iniciada.");
    for (const line of panelMoves(from.panel, await figuresOf(shop))) story.after(line);
    return;
  }
  // Two moments from Kafka's own description of the group: when the coordinator took the
  // instance out (its LeaveGroup, or its session's end), and when the others held its
  // partitions again. The first is Kafka's clock: a session is counted from the last
  // heartbeat the broker processed, which a busy broker processes late (a CI run read 7.0 s
  // from the kill for a 6 s session). The second is the shop's: the others' rejoin. Both
  // from one client's readings (waitForHolders's `seen`).
  let goneAt: number | null = null;
  const { holders, at } = await holdersOf(
    shop,
    (h) => settled(h) && !h.byInstance.has(p.instancia),
    shop.sessionMs + 30_000,
    (h, when) => {
      if (goneAt === null && !h.byInstance.has(p.instancia)) goneAt = when;
    },
  );
  const leftAt = goneAt ?? at;
  story.figure("segundosAteSairDoGrupo", (leftAt - started) / 1000);
  story.figure("segundosAteParticoesMudarem", (at - started) / 1000);
  story.after(
    `O coordenador tirou ${p.instancia} do grupo ${seconds(leftAt - started)} depois do sinal; as partições mudaram de dono ${seconds(at - leftAt)} depois disso (${seconds(at - started)} do sinal): ${describeHolders(holders)}.`,
  );
  story.after(
    signal === "SIGTERM"
      ? `Por que esse tempo: ao receber SIGTERM, ${p.instancia} termina a decisão em andamento (até ${seconds(shop.decisionMs)}), confirma seus offsets e sai do grupo (LeaveGroup); as outras, que mandam heartbeat a cada ${seconds(HEARTBEAT_MS)} mesmo no meio de uma decisão, sabem do rebalanceamento em até ${seconds(HEARTBEAT_MS)} e entram de novo assim que terminam a decisão em andamento.`
      : `Por que esse tempo: morto com kill -9, ${p.instancia} não avisa o grupo. O coordenador só o tira quando a sessão expira (${seconds(shop.sessionMs)} sem heartbeat: o menor valor que o Kafka aceita por padrão, group.min.session.timeout.ms; uma instância viva manda heartbeat a cada ${seconds(HEARTBEAT_MS)}, mesmo durante a decisão de ${seconds(shop.decisionMs)}, e não corre o risco de ser tirada). Então as outras entram de novo e retomam do último offset confirmado — o pedido que ele decidia pode ser decidido de novo.`,
  );
  await tellOutcome(shop, story, from);
}

/** Pausar (SIGSTOP): an instance frozen for N s, removed by the group past its session. */
function pauseAction(shop: EventLogShop): LabAction<{ instancia: string; segundos: number }> {
  return {
    acao: "pausar-pagamentos",
    rotulo: "Pausar (SIGSTOP)",
    resumo:
      "Congela uma instância por N s: passada a sessão, o grupo a tira; ao voltar, ela entra de novo.",
    campos: [
      instanceField("caixa-1"),
      { nome: "segundos", rotulo: "segundos", tipo: "numero", min: 2, max: 60, padrao: 15 },
    ],
    params: z.object({ instancia, segundos: z.number().int().min(2).max(60) }),
    title: (p) => `Pausar ${p.instancia} por ${p.segundos} s`,
    refusal: (p) => notRunning(shop, p.instancia),
    run: (p, story) => pauseStory(shop, p, story),
  };
}

/** While frozen, when the group removed it; after SIGCONT, when it was back. */
async function pauseStory(
  shop: EventLogShop,
  p: { instancia: string; segundos: number },
  story: Story,
) {
  const from = await startingPoint(shop);
  story.before(
    `${p.instancia} fica congelada (SIGSTOP) por ${p.segundos} s: não decide, não manda heartbeat. ${p.segundos * 1000 > shop.sessionMs ? `Passados ${seconds(shop.sessionMs)} (a sessão), o coordenador a tira do grupo.` : `Isso é menos que a sessão (${seconds(shop.sessionMs)}): o grupo talvez nem perceba.`}`,
  );
  story.before("Observe no painel o lag do grupo pagamentos e quem segura cada partição.");
  const started = Date.now();
  shop.processes.signal(p.instancia, "SIGSTOP");
  let removedAt: number | null = null;
  const until = started + p.segundos * 1000;
  while (Date.now() < until) {
    if (removedAt === null) {
      const h = await holdersOf(shop, () => true, 5000).catch(() => null);
      if (h && !h.holders.byInstance.has(p.instancia)) {
        removedAt = Date.now();
        story.line(
          `O grupo tirou ${p.instancia} depois de ${seconds(removedAt - started)}: ${describeHolders(h.holders)}.`,
        );
      }
    }
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(500, until - Date.now()))));
  }
  shop.processes.signal(p.instancia, "SIGCONT");
  story.line(`${p.instancia} continua (SIGCONT) após ${seconds(Date.now() - started)}.`);
  const { holders, at } = await holdersOf(
    shop,
    (h) => settled(h) && h.byInstance.has(p.instancia),
    shop.sessionMs + 30_000,
  );
  story.figure("segundosForaDoGrupo", removedAt === null ? 0 : (at - removedAt) / 1000);
  story.figure("segundosAteSairDoGrupo", removedAt === null ? -1 : (removedAt - started) / 1000);
  story.after(
    removedAt === null
      ? `O grupo não tirou ${p.instancia}: a pausa foi mais curta que a sessão (${seconds(shop.sessionMs)}). Os pedidos das partições dela só esperaram.`
      : `O grupo tirou ${p.instancia} ${seconds(removedAt - started)} depois da pausa (a sessão é de ${seconds(shop.sessionMs)}) e a recebeu de volta ${seconds(at - removedAt)} depois: ${describeHolders(holders)}.`,
  );
  await tellOutcome(shop, story, from);
}

/** Why the lab will not stop (`up`) or start (`down`) this checkout's single Kafka, if it will not. */
async function kafkaRefusal(shop: EventLogShop, want: "up" | "down") {
  if (shop.kafka.cluster) return null;
  const others = kafkaUsers(shop.kafka.settings).others();
  if (others.length > 0)
    return `O Kafka em ${shop.kafka.settings.brokers.join(",")} está em uso por outra execução (pid ${others.join(", ")}: um npm test, um experimento ou outro npm start): o laboratório não o para debaixo dela.`;
  if (!kafkaStartedByInfra(shop.kafka.instance) && (await kafkaAnswers(shop.kafka.settings)))
    return `O Kafka em ${shop.kafka.settings.brokers.join(",")} não foi iniciado pela infra deste checkout (é de outro checkout, do Docker ou de alguém): o laboratório não o para.`;
  const up = kafkaStartedByInfra(shop.kafka.instance);
  if (want === "up" && !up) return "O Kafka já está parado.";
  if (want === "down" && up) return "O Kafka já está rodando.";
  return null;
}

/** When the Kafka was stopped from the page, and the state then (its start tells the rest). */
interface Outage {
  at: number;
  lastId: number;
  repeated: number;
  panel: Awaited<ReturnType<typeof figuresOf>>;
  how: string;
}
/** Shared by the stop and start actions of one page: the outage the stop began. */
interface KafkaDown {
  outage: Outage | null;
}

/** Parar o Kafka and Matar o Kafka: this checkout's broker (or one node of its cluster) down. */
function stopKafkaAction(
  shop: EventLogShop,
  down: KafkaDown,
  acao: string,
  signal: "SIGTERM" | "SIGKILL",
  rotulo: string,
): LabAction<Record<string, never>> {
  return {
    acao,
    rotulo,
    resumo:
      signal === "SIGTERM"
        ? "Para o Kafka deste checkout (SIGTERM). Faça pedidos enquanto ele está fora: o outbox os guarda."
        : "Mata o Kafka deste checkout (kill -9). Faça pedidos enquanto ele está fora: o outbox os guarda.",
    campos: shop.kafka.cluster
      ? [{ nome: "no", rotulo: "nó", tipo: "escolha", opcoes: [...NODE_CHOICES], padrao: "líder" }]
      : [],
    params: (shop.kafka.cluster
      ? z.object({ no: z.enum(NODE_CHOICES).default("líder") })
      : z.object({}).strict()) as z.ZodType<Record<string, never>>,
    title: (p) =>
      shop.kafka.cluster ? `${rotulo}: nó ${(p as { no?: string }).no ?? "líder"}` : rotulo,
    refusal: () => kafkaRefusal(shop, "up"),
    async run(p, story) {
      if (shop.kafka.cluster)
        return stopClusterNode(
          shop,
          shop.kafka.cluster,
          (p as { no?: NodeChoice }).no ?? "líder",
          signal,
          story,
        );
      const from = await startingPoint(shop);
      story.before(
        `O broker Kafka ${signal === "SIGTERM" ? "para" : "morre"}. A API de pedidos continua aceitando pedidos: cada um é salvo com seu PedidoCriado no outbox, na mesma transação; sem a confirmação do Kafka em ${seconds(shop.confirmMs)}, ela responde 500, e o relay publica o evento quando o Kafka voltar.`,
      );
      story.before(
        "Faça pedidos agora (o formulário, ou a ação Rajada), depois inicie o Kafka. Observe o outbox no painel.",
      );
      const started = Date.now();
      await stopKafka(() => {}, { instance: shop.kafka.instance, signal });
      down.outage = { at: started, ...from, how: signal === "SIGTERM" ? "parado" : "morto" };
      story.figure("segundosParaParar", (Date.now() - started) / 1000);
      story.after(
        `O Kafka está fora (${seconds(Date.now() - started)} para ${signal === "SIGTERM" ? "parar" : "morrer"}). O painel vai dizer que não consegue lê-lo.`,
      );
    },
  };
}

/** Iniciar o Kafka: the broker back; what the outbox kept and published, and the first decision. */
function startKafkaAction(shop: EventLogShop, down: KafkaDown): LabAction<Record<string, never>> {
  return {
    acao: "iniciar-kafka",
    rotulo: "Iniciar o Kafka",
    resumo:
      "Inicia de novo o Kafka deste checkout: o outbox publica o que guardou e as decisões voltam.",
    campos: [],
    params: z.object({}).strict() as z.ZodType<Record<string, never>>,
    title: () => "Iniciar o Kafka",
    refusal: () => kafkaRefusal(shop, "down"),
    async run(_p, story) {
      if (shop.kafka.cluster) return startClusterNodes(shop, shop.kafka.cluster, story);
      await kafkaBackStory(shop, down.outage ?? (await outageFromNow(shop)), story);
      down.outage = null;
    },
  };
}

/** An outage the page did not see begin (Kafka stopped outside it): counted from now. */
async function outageFromNow(shop: EventLogShop): Promise<Outage> {
  return {
    at: Date.now(),
    lastId: await shop.db.lastId(),
    repeated: await shop.db.repeatedResults(),
    panel: null,
    how: "parado",
  };
}

/** Kafka asked back: when it answered, when the group was stable, and the outage's orders counted. */
async function kafkaBackStory(shop: EventLogShop, down: Outage, story: Story) {
  story.before(
    "O Kafka volta. O relay do outbox publica os eventos guardados, na ordem; os consumidores entram de novo nos grupos e retomam do último offset confirmado.",
  );
  story.before("Observe o outbox esvaziar no painel, e os pedidos passarem a Pago ou Recusado.");
  const kept = await shop.db.outboxPending();
  // Counted from the moment the broker is asked to start: nothing can reach it before, and
  // the relay may publish between its first answer and startKafka seeing that answer.
  const backAt = Date.now();
  const r = await startKafka(shop.kafka.settings, () => {}, { instance: shop.kafka.instance });
  story.line(`O Kafka respondeu em ${seconds(r.ms)}; o outbox guardava ${kept} eventos.`);
  const stable = await holdersOf(shop, (h) => settled(h), 60_000).catch(() => null);
  if (stable) {
    story.figure("grupoEstavelS", (stable.at - backAt) / 1000);
    story.line(
      `O grupo pagamentos voltou a estável ${seconds(stable.at - backAt)} depois (${describeHolders(stable.holders)}).`,
    );
  }
  const deadline = backAt + 60_000;
  while ((await shop.db.outboxPending()) > 0 && Date.now() < deadline)
    await new Promise((res) => setTimeout(res, 250));
  const lost = await waitDecided(shop, down.lastId, story);
  const f = await outageFigures(shop, down, backAt, r.ms);
  const { rows, answered500, publishedAfter, first, resumedMs } = f;
  const answeredAt = backAt + r.ms;
  const twice = (await shop.db.repeatedResults()) - down.repeated;
  story.figure("outboxNaVolta", kept);
  story.figure("pedidosDuranteQueda", rows.length);
  story.figure("respondidos500", answered500);
  story.figure("publicadosPeloOutboxDepois", publishedAfter);
  story.figure("kafkaRespondeuEmS", r.ms / 1000);
  story.figure("primeiraDecisaoS", first ? (Date.parse(first) - backAt) / 1000 : -1);
  story.figure("relayRetomouS", resumedMs === null ? -1 : resumedMs / 1000);
  story.figure("pedidosPerdidos", lost);
  story.figure("decididosDuasVezes", twice);
  story.after(
    `Enquanto o Kafka esteve ${down.how} (${seconds(backAt - down.at)}), ${rows.length} pedidos foram feitos: ${answered500} responderam 500 (sem confirmação em ${seconds(shop.confirmMs)}), e o outbox publicou ${publishedAfter} depois da volta.`,
  );
  story.after(
    first
      ? `A primeira decisão depois da volta veio ${seconds(Date.parse(first) - backAt)} depois de pedir o Kafka de volta (ele respondeu em ${seconds(r.ms)}): o relay publica, o grupo pagamentos volta a estável${stable ? ` (${seconds(stable.at - backAt)}${stable.at - backAt > 2000 ? `: um membro que o broker ainda conhecia foi esperado até sua sessão de ${seconds(shop.sessionMs)} acabar` : ""})` : ""}, o pagamento espera ${seconds(shop.decisionMs)} e o resultado volta.`
      : "Nenhuma decisão foi aplicada depois da volta (nenhum pedido esperava).",
  );
  if (resumedMs !== null && first)
    story.after(
      `Depois da resposta do Kafka, o relay publicou de novo em ${seconds(resumedMs)} e a primeira decisão veio em ${seconds(Date.parse(first) - answeredAt)}: ${seconds(shop.decisionMs)} disso é a espera do pagamento antes de decidir.`,
    );
  story.after(`Pedidos perdidos: ${lost}. Decididos duas vezes: ${twice}.`);
  story.after(
    `No painel, eventos no outbox: ${kept} quando o Kafka voltou → ${await shop.db.outboxPending()} agora.`,
  );
  for (const line of panelMoves(down.panel, await figuresOf(shop)))
    if (!line.includes("nada mudou")) story.after(line);
}

/**
 * The outage's orders from the outbox: made while Kafka was down, answered 500, published
 * after; the first decision after Kafka was asked back, and when the relay resumed.
 */
async function outageFigures(shop: EventLogShop, down: Outage, backAt: number, answerMs: number) {
  const backIso = new Date(backAt).toISOString();
  const rows = await shop.db.outboxBetween(new Date(down.at).toISOString(), backIso);
  const answered500 = rows.filter(
    (row) =>
      row.enviado_em === null ||
      Date.parse(row.enviado_em) - Date.parse(row.criado_em) > shop.confirmMs,
  ).length;
  const publishedAfter = rows.filter(
    (row) => row.enviado_em !== null && row.enviado_em >= backIso,
  ).length;
  const first = await shop.db.firstDecisionSince(backIso);
  // The shop resumed when the relay published again: counted from Kafka's answer (0 when
  // the relay's first send came before startKafka saw that answer).
  const answeredAt = backAt + answerMs;
  const firstSent = rows
    .map((row) => row.enviado_em)
    .filter((e): e is string => e !== null && e >= backIso)
    .sort()[0];
  const resumedMs = firstSent ? Math.max(0, Date.parse(firstSent) - answeredAt) : null;
  return { rows, answered500, publishedAfter, first, resumedMs };
}

/** Registro envenenado: a record that breaks the contract, until it is a dead letter. */
function poisonAction(shop: EventLogShop): LabAction<Record<string, never>> {
  return {
    acao: "registro-veneno",
    rotulo: "Registro envenenado",
    resumo:
      "Escreve em pedidos-criados um registro que quebra o contrato: ele vai para pedidos-criados.dlq e a partição segue.",
    campos: [],
    params: z.object({}).strict() as z.ZodType<Record<string, never>>,
    title: () => "Registro envenenado em pedidos-criados",
    refusal: () => null,
    async run(_p, story) {
      const from = await startingPoint(shop);
      const { topics, dlq } = shop.names;
      story.before(
        "Um registro que nenhum consumidor consegue ler (um PedidoCriado sem os campos do contrato) entra em pedidos-criados. A instância que segura a partição tenta, desiste, copia o registro para pedidos-criados.dlq com o motivo e segue: os pedidos atrás dele não ficam presos.",
      );
      story.before("Observe as cartas mortas no painel (e o botão para lê-las).");
      const lettersBefore = await deadLetters(shop.brokers, dlq.pedidosCriados);
      const producer = clientOf(shop.brokers).producer();
      await producer.connect();
      const key = pedidoKey(900_000 + Math.floor(Math.random() * 99_999));
      const started = Date.now();
      try {
        const [meta] = await producer.send({
          topic: topics.pedidosCriados,
          acks: -1,
          messages: [
            { key, value: JSON.stringify({ versao: 1, veneno: "sem pedidoId nem valor" }) },
          ],
        });
        story.line(`Escrito em ${topics.pedidosCriados}[${meta?.partition}]@${meta?.baseOffset}.`);
      } finally {
        await producer.disconnect();
      }
      const deadline = started + 60_000;
      let letters = lettersBefore;
      while (letters <= lettersBefore && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        letters = await deadLetters(shop.brokers, dlq.pedidosCriados);
      }
      story.figure("cartasMortasNovas", letters - lettersBefore);
      story.figure("segundosAteCartaMorta", (Date.now() - started) / 1000);
      if (letters <= lettersBefore)
        story.fail("Nenhuma carta morta nova em 60 s: há uma instância de pagamentos rodando?");
      else
        story.after(
          `O registro virou carta morta em ${seconds(Date.now() - started)}: ${dlq.pedidosCriados} tem ${letters} (antes ${lettersBefore}). Leia-a no painel; o CLI de cartas mortas (npm run dlq) pode reenviá-la corrigida.`,
        );
      await tellOutcome(shop, story, from);
    },
  };
}

/** Rajada de pedidos: N orders at once, 8 at a time, and how they were decided. */
function burstAction(shop: EventLogShop): LabAction<{ quantidade: number }> {
  return {
    acao: "rajada",
    rotulo: "Rajada de pedidos",
    resumo: "Faz N pedidos de uma vez (metade abaixo de 100,00, metade acima).",
    campos: [
      { nome: "quantidade", rotulo: "pedidos", tipo: "numero", min: 1, max: 200, padrao: 20 },
    ],
    params: z.object({ quantidade: z.number().int().min(1).max(200) }),
    title: (p) => `Rajada de ${p.quantidade} pedidos`,
    refusal: () => null,
    async run(p, story) {
      const from = await startingPoint(shop);
      story.before(
        `${p.quantidade} pedidos entram pela API, 8 de cada vez; os pares ficam abaixo de 100,00 (aprovados), os ímpares acima (recusados). Cada um espera ${seconds(shop.decisionMs)} pela decisão.`,
      );
      story.before("Observe o lag do grupo pagamentos subir e descer, e a lista de pedidos.");
      const statuses = new Map<number, number>();
      let next = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: Math.min(8, p.quantidade) }, async () => {
          while (next < p.quantidade) {
            const n = next++;
            const res = await placeOrder(shop.ordersUrl, n).catch(() => ({ status: 0 }));
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
        }),
      );
      story.line(
        `Respostas em ${seconds(Date.now() - started)}: ${[...statuses].map(([s, n]) => `${n}× ${s === 0 ? "sem resposta" : s}`).join(", ")}.`,
      );
      story.figure("respondidos201", statuses.get(201) ?? 0);
      story.figure("respondidos500", statuses.get(500) ?? 0);
      if (!(await kafkaAnswers(shop.kafka.settings, 2000))) {
        story.after(
          `O Kafka está fora: os ${p.quantidade} pedidos estão salvos, com seus eventos no outbox (${await shop.db.outboxPending()} esperando). Inicie o Kafka: a história dele conta quantos o outbox publicou e quantos foram decididos.`,
        );
        return;
      }
      const lost = await waitDecided(shop, from.lastId, story, 120_000);
      const by = await shop.db.statuses(from.lastId);
      story.figure("pagos", by.get("PAGO") ?? 0);
      story.figure("recusados", by.get("RECUSADO") ?? 0);
      story.after(
        `${by.get("PAGO") ?? 0} pagos e ${by.get("RECUSADO") ?? 0} recusados ${seconds(Date.now() - started)} depois do primeiro pedido; ${lost} ainda aguardando.`,
      );
      await tellOutcome(shop, story, from);
    },
  };
}

/** The event-log edition's actions, in the page's order. */
export function eventLogActions(shop: EventLogShop): AnyLabAction[] {
  const down: KafkaDown = { outage: null };
  return [
    anyAction(startPaymentsAction(shop)),
    anyAction(
      leaveAction(
        shop,
        "parar-pagamentos",
        "SIGTERM",
        "Parar (Ctrl-C)",
        "A instância recebe SIGTERM, como um Ctrl-C: termina o que decide, confirma os offsets e sai do grupo.",
      ),
    ),
    anyAction(
      leaveAction(
        shop,
        "matar-pagamentos",
        "SIGKILL",
        "Matar (kill -9)",
        "A instância morre na hora (kill -9): não termina a decisão nem avisa o grupo.",
      ),
    ),
    anyAction(pauseAction(shop)),
    anyAction(stopKafkaAction(shop, down, "parar-kafka", "SIGTERM", "Parar o Kafka")),
    anyAction(stopKafkaAction(shop, down, "matar-kafka", "SIGKILL", "Matar o Kafka (kill -9)")),
    anyAction(startKafkaAction(shop, down)),
    anyAction(poisonAction(shop)),
    anyAction(burstAction(shop)),
  ];
}

/** How many letters a dead-letter topic holds (0 when it does not exist yet). */
function deadLetters(brokers: string, topic: string): Promise<number> {
  // The panel's own count (libs/kafka's deadLetterCounts): letters from the topic's start to its end.
  return withAdmin(
    brokers,
    async (admin) => (await deadLetterCounts(admin, { [topic]: topic }))[0]?.cartas ?? 0,
  );
}

/** Which broker of a 3-node cluster to stop: the leader of pedidos-criados[0], one that is not, or by id. */
const NODE_CHOICES = ["líder", "não líder", "1", "2", "3"] as const;
type NodeChoice = (typeof NODE_CHOICES)[number];

/** Each partition of the shop's two topics with its leader and in-sync replicas, from Kafka. */
async function partitionsOf(shop: EventLogShop) {
  const { topics } = shop.names;
  return withAdmin(shop.brokers, async (admin) =>
    (
      await admin.fetchTopicMetadata({
        topics: [topics.pedidosCriados, topics.pagamentosResultados],
      })
    ).topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionId,
        leader: p.leader,
        isr: p.isr,
        replicas: p.replicas,
      })),
    ),
  );
}

/** Stops or kills one broker of the cluster and tells how long until its partitions had leaders again. */
async function stopClusterNode(
  shop: EventLogShop,
  cluster: { name: string; settings: ClusterSettings },
  choice: NodeChoice,
  signal: "SIGTERM" | "SIGKILL",
  story: Story,
) {
  const before = await partitionsOf(shop);
  const first = before.find(
    (x) => x.topic === shop.names.topics.pedidosCriados && x.partition === 0,
  );
  const leader = first?.leader ?? 1;
  const id =
    choice === "líder"
      ? leader
      : choice === "não líder"
        ? ([1, 2, 3].find((n) => n !== leader) as number)
        : Number(choice);
  const led = before.filter((x) => x.leader === id).length;
  story.before(
    `O broker ${id} ${signal === "SIGTERM" ? "para" : "morre (kill -9)"}${id === leader ? `: ele lidera pedidos-criados[0] e mais ${led - 1} partições` : `: ele não lidera pedidos-criados[0] (lidera ${led} partições)`}. Cada partição tem 3 réplicas e min.insync.replicas=2: o controlador elege um novo líder entre as réplicas em sincronia, e as escritas seguem com duas.`,
  );
  story.before("Observe no painel os líderes, as partições sub-replicadas e o broker fora do ar.");
  const started = Date.now();
  await stopKafka(() => {}, { instance: clusterNode(cluster.name, id), signal });
  let after = before;
  const deadline = started + 60_000;
  while (Date.now() < deadline) {
    after = await partitionsOf(shop).catch(() => after);
    if (
      after.every((x) => x.leader !== id && x.leader >= 0) &&
      after.some((x) => !x.isr.includes(id))
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const moved = (Date.now() - started) / 1000;
  story.figure("brokerParado", id);
  story.figure("particoesQueEleLiderava", led);
  story.figure("segundosAteNovosLideres", moved);
  story.figure("subReplicadas", after.filter((x) => x.isr.length < x.replicas.length).length);
  story.after(
    `Em ${seconds(Date.now() - started)} as ${led} partições que o broker ${id} liderava tinham outro líder; ${after.filter((x) => x.isr.length < x.replicas.length).length} partições estão sub-replicadas (2 de 3 réplicas em sincronia). Inicie o Kafka para trazê-lo de volta.`,
  );
}

/** Starts the cluster's brokers that are down, and tells how long until every replica was in sync. */
async function startClusterNodes(
  shop: EventLogShop,
  cluster: { name: string; settings: ClusterSettings },
  story: Story,
) {
  story.before(
    "Os nós parados voltam. Cada réplica de volta busca no líder o que perdeu e volta à lista em sincronia (ISR); os líderes não mudam sozinhos de volta.",
  );
  const started = Date.now();
  await startKafkaCluster(cluster.settings, () => {}, { name: cluster.name });
  story.line(`Os nós responderam em ${seconds(Date.now() - started)}.`);
  let parts = await partitionsOf(shop);
  const deadline = Date.now() + 60_000;
  while (parts.some((x) => x.isr.length < x.replicas.length) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    parts = await partitionsOf(shop).catch(() => parts);
  }
  const under = parts.filter((x) => x.isr.length < x.replicas.length).length;
  story.figure("segundosAteTudoEmSincronia", (Date.now() - started) / 1000);
  story.figure("subReplicadas", under);
  story.after(
    under === 0
      ? `Em ${seconds(Date.now() - started)} todas as réplicas estavam em sincronia de novo. Líderes agora: ${[...new Set(parts.map((x) => x.leader))].sort().join(", ")}.`
      : `${under} partições ainda sub-replicadas depois de 60 s.`,
  );
}
