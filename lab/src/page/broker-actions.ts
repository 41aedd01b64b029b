import { randomUUID } from "node:crypto";
import {
  ERROR_QUEUES,
  EXCHANGES,
  type PlataformaBroker,
  QUEUES,
  ROUTING_KEYS,
} from "@shop/contracts";
import amqp from "amqplib";
import { z } from "zod";
import { metricSum, send } from "../../../harness/http.ts";
import { queryRows } from "../../../harness/process.ts";
import type { RabbitNode } from "../../../infra/rabbitmq/node.ts";
import type { Service, ShopProcesses } from "../../../infra/services.ts";
import { seconds } from "./readings.ts";
import { type AnyLabAction, anyAction, type LabAction, type Story } from "./session.ts";

/**
 * The broker edition's actions on the page: payments stopped, killed and started; a node of
 * the shop's own 3-node RabbitMQ cluster stopped, killed and started (never the machine's
 * RabbitMQ); a poison message; the course's repeated and conflicting payment requests.
 * Figures come from the queues (RabbitMQ's own counts) and the two services' databases.
 */
export interface BrokerShop {
  processes: ShopProcesses;
  payments: Service;
  ordersUrl: string;
  ordersDb: string;
  paymentsDb: string;
  /** An administrator's AMQP URL for the shop's vhost (the page never sees it). */
  amqpAdminUrl: string;
  /** The shop's own cluster nodes (BROKER_CLUSTER_SIZE=3); empty on the machine's RabbitMQ. */
  nodes: RabbitNode[];
  /** Where the services' RabbitMQ is, for the refusal on the machine's. */
  machineRabbit: string;
}

const PAYMENTS = "payments";
const empty = z.object({}).strict() as z.ZodType<Record<string, never>>;

/**
 * Runs `work` on a confirm channel of a connection of its own, then closes it. A queue that
 * is not there closes the channel with an error event: heard here, so that it rejects
 * `work` instead of crashing the process or leaving the close waiting.
 */
export async function withAmqpChannel<T>(
  url: string,
  work: (channel: amqp.ConfirmChannel) => Promise<T>,
): Promise<T> {
  const connection = await amqp.connect(url);
  connection.on("error", () => {});
  try {
    const channel = await connection.createConfirmChannel();
    channel.on("error", () => {});
    return await work(channel);
  } finally {
    await connection.close().catch(() => {});
  }
}

/** Each queue's messages now (ready and unacknowledged), from RabbitMQ. */
function depths(url: string, queues: string[]): Promise<Map<string, number>> {
  return withAmqpChannel(url, async (channel) => {
    const out = new Map<string, number>();
    for (const q of queues) out.set(q, (await channel.checkQueue(q)).messageCount);
    return out;
  });
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

interface PedidoBroker {
  id: string;
  status: "ABERTO" | "EM_PAGAMENTO" | "PAGO";
  total: number;
}

/**
 * Issue 56: N orders and a payment request for each, four at a time. With payments stopped
 * the requests wait in the queue (the picture's ready count rises); with it running they
 * drain. Counted from the orders service's answers, the queue and the orders database.
 */
function paymentBurst(shop: BrokerShop): LabAction<{ quantidade: number }> {
  const queue = QUEUES.solicitacoes;
  return {
    acao: "rajada-pagamentos",
    rotulo: "Rajada de pagamentos",
    resumo: `Cria N pedidos e pede o pagamento de cada um: com o pagamento parado, as solicitações esperam em ${queue}.`,
    campos: [
      { nome: "quantidade", rotulo: "pagamentos", tipo: "numero", min: 1, max: 50, padrao: 10 },
    ],
    params: z.object({ quantidade: z.number().int().min(1).max(50) }),
    title: (p) => `Rajada de ${p.quantidade} pagamentos`,
    refusal: () => null,
    async run(p, story) {
      story.before(
        `${p.quantidade} pedidos são criados e cada um pede o seu pagamento (uma solicitacaoId nova cada). A resposta 202 quer dizer aceito e guardado, não pago.`,
      );
      story.before(`Observe ${queue} no desenho: prontas sobe com o pagamento parado.`);
      const statuses = new Map<number, number>();
      let next = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: Math.min(4, p.quantidade) }, async () => {
          while (next < p.quantidade) {
            next++;
            const status = await askOnePayment(shop).catch(() => 0);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      );
      const waiting = (await depths(shop.amqpAdminUrl, [queue])).get(queue) ?? 0;
      story.figure("respondidos202", statuses.get(202) ?? 0);
      story.figure("mensagensNaFila", waiting);
      story.figure("pendentes", pendingRequestsOf(shop));
      story.after(
        `Em ${seconds(Date.now() - started)}: ${[...statuses].map(([s, n]) => `${n}× ${s === 0 ? "sem resposta" : s}`).join(", ")}. Agora ${waiting} mensagens esperam em ${queue} e ${pendingRequestsOf(shop)} solicitações estão pendentes no banco de pedidos.`,
      );
    },
  };
}

// --- What a node action counts (issue 56): from the orders service's panel ------------------

const panelOf = async (shop: BrokerShop) =>
  (await send<PlataformaBroker>("GET", `${shop.ordersUrl}/plataforma`)).body;

/** The shop's queues the node leads now (none when the panel cannot be read). */
async function queuesLedBy(shop: BrokerShop, node: string): Promise<string[]> {
  const panel = await panelOf(shop).catch(() => null);
  return panel?.filas.filter((f) => f.lider === node).map((f) => f.nome) ?? [];
}

/** Polls the panel every 250 ms until `done` holds of it (30 s at most); the last reading. */
async function panelUntil(
  shop: BrokerShop,
  done: (p: PlataformaBroker) => boolean,
): Promise<{ panel: PlataformaBroker | null; held: boolean }> {
  let panel: PlataformaBroker | null = null;
  const held = await until(async () => {
    panel = await panelOf(shop).catch(() => null);
    return panel !== null && done(panel);
  }, 30_000);
  return { panel, held };
}

/**
 * Payment requests the orders service has answered 503 so far (its broker could not confirm
 * them within the spec's 5 s), from its own metric: shop_http_request_duration_seconds'
 * count for that route and status. Null when /metrics cannot be read.
 */
export function answered503(ordersUrl: string): Promise<number | null> {
  return metricSum(
    ordersUrl,
    "shop_http_request_duration_seconds_count",
    { route: "/pedidos/:id/pagamentos", status: "503" },
    { signal: AbortSignal.timeout(2000) },
  ).catch(() => null);
}

/** The 503 answers since `before` (answered503), told as a figure and a line. */
async function tellAnswered503(shop: BrokerShop, before: number | null, story: Story) {
  const now = await answered503(shop.ordersUrl);
  if (before === null || now === null) return;
  story.figure("respondidos503", now - before);
  story.after(
    now === before
      ? "Nenhum pedido de pagamento foi respondido 503 enquanto isso (métrica do serviço de pedidos)."
      : `${now - before} pedidos de pagamento foram respondidos 503 enquanto isso: o RabbitMQ não confirmou a publicação em 5 s; o cliente repete com a mesma solicitacaoId (métrica do serviço de pedidos).`,
  );
}

const waitingIn = (p: PlataformaBroker | null) =>
  (p?.filas ?? [])
    .filter((f) => !f.nome.endsWith(".erros"))
    .reduce((n, f) => n + (f.mensagens ?? 0), 0);

/** After a node stopped or killed: how many queues it led, and when each had another leader. */
async function tellLeadersMoved(
  shop: BrokerShop,
  node: string,
  led: string[],
  started: number,
  story: Story,
) {
  story.figure("filasLideradasPeloNo", led.length);
  const { panel, held } = await panelUntil(shop, (p) =>
    led.every((q) => {
      const lider = p.filas.find((f) => f.nome === q)?.lider;
      return lider !== undefined && lider !== null && lider !== node;
    }),
  );
  story.figure("mensagensEsperando", waitingIn(panel));
  if (!held) return story.fail(`Em 30 s, nem toda fila que ${node} liderava tinha outro líder.`);
  story.figure("segundosAteNovoLider", (Date.now() - started) / 1000);
  const moved = led.map((q) => `${q} → ${panel?.filas.find((f) => f.nome === q)?.lider}`);
  story.after(
    led.length === 0
      ? `${node} não liderava nenhuma fila: nenhum líder precisou mudar. ${waitingIn(panel)} mensagens esperam nas filas.`
      : `${led.length} filas que ${node} liderava tinham novo líder em ${seconds(Date.now() - started)}: ${moved.join(", ")}. ${waitingIn(panel)} mensagens esperam nas filas.`,
  );
}

/** After a node started: when it was an online member of every queue it belongs to again. */
async function tellMembersBack(shop: BrokerShop, node: string, started: number, story: Story) {
  const { panel, held } = await panelUntil(shop, (p) =>
    p.filas.every((f) => !f.membros.includes(node) || f.emLinha.includes(node)),
  );
  const queues = (panel?.filas ?? []).filter((f) => f.membros.includes(node)).length;
  story.figure("filasComONo", queues);
  if (!held) return story.fail(`Em 30 s, ${node} não voltou a ser membro em linha de toda fila.`);
  story.figure("segundosAteMembrosDeVolta", (Date.now() - started) / 1000);
  story.after(
    `${node} voltou como membro em linha das suas ${queues} filas em ${seconds(Date.now() - started)}; ele segue como seguidor e alcança o líder.`,
  );
}

/** One new order and its payment request (APROVAR); the request's HTTP status. */
async function askOnePayment(shop: BrokerShop): Promise<number> {
  const pedido = (
    await send<PedidoBroker>("POST", `${shop.ordersUrl}/pedidos`, {
      clienteId: "laboratorio",
      itens: [{ sku: "CAFE", quantidade: 1, precoUnitario: 9.9 }],
    })
  ).body;
  const res = await send("POST", `${shop.ordersUrl}/pedidos/${pedido.id}/pagamentos`, {
    solicitacaoId: randomUUID(),
    cenario: "APROVAR",
  });
  return res.status;
}

const pendingRequestsOf = (shop: BrokerShop) =>
  queryRows<{ n: number }>(
    shop.ordersDb,
    "SELECT COUNT(*) AS n FROM solicitacoes WHERE estado = 'PENDENTE'",
  )[0]?.n ?? 0;

const newOrder = async (shop: BrokerShop) =>
  (
    await send<PedidoBroker>("POST", `${shop.ordersUrl}/pedidos`, {
      clienteId: "laboratorio",
      itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
    })
  ).body;
const request = (
  shop: BrokerShop,
  id: string,
  solicitacaoId: string,
  cenario: "APROVAR" | "RECUSAR",
) =>
  send<Record<string, unknown>>("POST", `${shop.ordersUrl}/pedidos/${id}/pagamentos`, {
    solicitacaoId,
    cenario,
  });
const statusOf = async (shop: BrokerShop, id: string) =>
  (await send<PedidoBroker>("GET", `${shop.ordersUrl}/pedidos/${id}`)).body.status;
/** Why an action on payments is refused: it is not running, or this start did not start it. */
const paymentsRunning = (shop: BrokerShop) =>
  shop.processes.running(PAYMENTS)
    ? null
    : shop.processes.all().some((p) => p.name === PAYMENTS)
      ? "O serviço de pagamentos não está rodando agora (já parou)."
      : "O serviço de pagamentos não foi iniciado por este npm run start:broker: o laboratório só age no que ele mesmo iniciou.";

/** Parar and Matar pagamentos: the service down, politely or not; its queue keeps the requests. */
function leavePaymentsAction(
  shop: BrokerShop,
  acao: string,
  signal: "SIGTERM" | "SIGKILL",
  rotulo: string,
): LabAction<Record<string, never>> {
  return {
    acao,
    rotulo,
    resumo:
      signal === "SIGTERM"
        ? "Para o serviço de pagamentos (SIGTERM): as solicitações esperam na fila."
        : "Mata o serviço de pagamentos (kill -9): uma entrega sem ack volta para a fila.",
    campos: [],
    params: empty,
    title: () => rotulo,
    refusal: () => paymentsRunning(shop),
    async run(_p, story) {
      story.before(
        signal === "SIGTERM"
          ? "O serviço de pagamentos recebe SIGTERM: para de consumir, termina a entrega em mãos (ack depois do commit) e fecha."
          : "O serviço de pagamentos morre sem aviso: a entrega que ele tinha sem ack volta a Ready, e será entregue de novo (redelivered) quando ele voltar.",
      );
      story.before(
        "Peça pagamentos agora: a resposta é 202 e a solicitação espera em pagamentos.solicitacoes. Observe a fila no painel; depois, inicie o serviço.",
      );
      const started = Date.now();
      shop.processes.signal(PAYMENTS, signal);
      await shop.processes.running(PAYMENTS)?.exited;
      story.figure("segundosParaParar", (Date.now() - started) / 1000);
      const d = await depths(shop.amqpAdminUrl, [QUEUES.solicitacoes]);
      story.after(
        `Pagamentos parou em ${seconds(Date.now() - started)}. ${d.get(QUEUES.solicitacoes)} mensagens em ${QUEUES.solicitacoes}.`,
      );
    },
  };
}

/** Iniciar pagamentos: the service back; how long until its queue and the pending requests drained. */
function startPaymentsAction(shop: BrokerShop): LabAction<Record<string, never>> {
  const pendingRequests = () => pendingRequestsOf(shop);
  return {
    acao: "iniciar-pagamentos",
    rotulo: "Iniciar pagamentos",
    resumo:
      "Inicia de novo o serviço de pagamentos: a fila esvazia e cada solicitação é decidida uma vez.",
    campos: [],
    params: empty,
    title: () => "Iniciar pagamentos",
    refusal: () =>
      shop.processes.running(PAYMENTS) ? "O serviço de pagamentos já está rodando." : null,
    async run(_p, story) {
      const before = await depths(shop.amqpAdminUrl, [QUEUES.solicitacoes]);
      const waiting = before.get(QUEUES.solicitacoes) ?? 0;
      const pending = pendingRequests();
      story.before(
        `${waiting} mensagens esperam em ${QUEUES.solicitacoes} e ${pending} solicitações estão pendentes no banco de pedidos. O serviço volta, consome a fila e decide cada solicitação uma vez (chave: solicitacaoId).`,
      );
      const started = Date.now();
      shop.processes.start(shop.payments, PAYMENTS);
      const drained = await until(
        async () =>
          (await depths(shop.amqpAdminUrl, [QUEUES.solicitacoes])).get(QUEUES.solicitacoes) === 0 &&
          pendingRequests() === 0,
        90_000,
      );
      story.figure("segundosAteEsvaziar", (Date.now() - started) / 1000);
      story.figure("pendentesDepois", pendingRequests());
      const twice = queryRows<{ n: number }>(
        shop.paymentsDb,
        "SELECT COALESCE(SUM(repeticoes), 0) AS n FROM decisoes",
      )[0]?.n;
      story.figure("repeticoesReconhecidas", Number(twice ?? 0));
      if (!drained) story.fail(`A fila não esvaziou em 90 s (${pendingRequests()} pendentes).`);
      else
        story.after(
          `Em ${seconds(Date.now() - started)} a fila esvaziou e nenhuma solicitação ficou pendente. Repetições reconhecidas pelo pagamento (sem decidir de novo), no total: ${twice}.`,
        );
    },
  };
}

/** Mensagem envenenada: a message that is not JSON, until it is in the .erros queue. */
function poisonAction(shop: BrokerShop): LabAction<Record<string, never>> {
  return {
    acao: "mensagem-veneno",
    rotulo: "Mensagem envenenada",
    resumo: `Publica em ${QUEUES.solicitacoes} uma mensagem que não é JSON: ela vai para ${ERROR_QUEUES.solicitacoes}.`,
    campos: [],
    params: empty,
    title: () => "Mensagem envenenada",
    refusal: () => paymentsRunning(shop),
    run: (_p, story) => poisonStory(shop, story),
  };
}

/** Published with a confirm, then counted in the error queue until it arrives (30 s at most). */
async function poisonStory(shop: BrokerShop, story: Story) {
  story.before(
    `Uma mensagem que não é um JSON de SolicitacaoPagamento entra em ${QUEUES.solicitacoes}. O consumidor não a entende, rejeita sem requeue, e o RabbitMQ a manda à fila de erros ${ERROR_QUEUES.solicitacoes} (dead-letter): nada se perde, nada trava a fila.`,
  );
  story.before(`Observe ${ERROR_QUEUES.solicitacoes} no painel.`);
  const errorsBefore =
    (await depths(shop.amqpAdminUrl, [ERROR_QUEUES.solicitacoes])).get(ERROR_QUEUES.solicitacoes) ??
    0;
  const connection = await amqp.connect(shop.amqpAdminUrl);
  const started = Date.now();
  try {
    const channel = await connection.createConfirmChannel();
    channel.publish(EXCHANGES.commands, ROUTING_KEYS.solicitar, Buffer.from("isto não é JSON {"), {
      persistent: true,
      contentType: "application/json",
    });
    await channel.waitForConfirms();
  } finally {
    await connection.close().catch(() => {});
  }
  let after = errorsBefore;
  await until(async () => {
    after =
      (await depths(shop.amqpAdminUrl, [ERROR_QUEUES.solicitacoes])).get(
        ERROR_QUEUES.solicitacoes,
      ) ?? 0;
    return after > errorsBefore;
  }, 30_000);
  story.figure("mensagensNaFilaDeErros", after);
  story.figure("segundosAteFilaDeErros", (Date.now() - started) / 1000);
  if (after <= errorsBefore) story.fail(`Nada chegou a ${ERROR_QUEUES.solicitacoes} em 30 s.`);
  else
    story.after(
      `Em ${seconds(Date.now() - started)} a mensagem estava em ${ERROR_QUEUES.solicitacoes} (${errorsBefore} → ${after}). O CLI de cartas mortas (npm run dlq) a mostra e reenvia.`,
    );
}

type CourseAction = "pagamento-repetido" | "pagamento-conflitante";

/** The course's repeated and conflicting payment requests: the same solicitacaoId twice. */
function courseAction(shop: BrokerShop, acao: CourseAction): LabAction<Record<string, never>> {
  return {
    acao,
    rotulo:
      acao === "pagamento-repetido"
        ? "Pedido de pagamento repetido"
        : "Pedido de pagamento conflitante",
    resumo:
      acao === "pagamento-repetido"
        ? "Pede o mesmo pagamento duas vezes, com a mesma solicitacaoId: uma decisão só."
        : "Pede com a mesma solicitacaoId um cenário diferente: 409, e a primeira segue.",
    campos: [],
    params: empty,
    title: () => (acao === "pagamento-repetido" ? "Pagamento repetido" : "Pagamento conflitante"),
    refusal: () => paymentsRunning(shop),
    run: (_p, story) => courseStory(shop, acao, story),
  };
}

/** Two requests with one key; the answers, the order's status and the decisions stored. */
async function courseStory(shop: BrokerShop, acao: CourseAction, story: Story) {
  const repeated = acao === "pagamento-repetido";
  story.before(
    repeated
      ? "Um cliente que não recebeu a resposta tenta de novo com a mesma chave (solicitacaoId). A repetição responde 202 enquanto a solicitação está pendente, ou 200 com a decisão se ela já saiu; nada novo é publicado, e o pagamento guarda uma só decisão."
      : "A mesma chave com outro conteúdo (RECUSAR depois de APROVAR) é um erro do cliente: 409, e a primeira solicitação segue sozinha.",
  );
  const pedido = await newOrder(shop);
  const key = randomUUID();
  const first = await request(shop, pedido.id, key, "APROVAR");
  const second = await request(shop, pedido.id, key, repeated ? "APROVAR" : "RECUSAR");
  story.line(`Pedido ${pedido.id}: primeira resposta ${first.status}, segunda ${second.status}.`);
  const paid = await until(async () => (await statusOf(shop, pedido.id)) === "PAGO", 30_000);
  const decisions = queryRows<{ repeticoes: number }>(
    shop.paymentsDb,
    "SELECT repeticoes FROM decisoes WHERE solicitacao_id = ?",
    key,
  );
  story.figure("primeiraResposta", first.status);
  story.figure("segundaResposta", second.status);
  story.figure("decisoes", decisions.length);
  story.figure("repeticoes", decisions[0]?.repeticoes ?? 0);
  // A repeat while the request is pending answers 202; once it is decided, 200 with the
  // decision (docs/broker.md): both are "the same request, nothing new published".
  const expected = repeated ? [200, 202].includes(second.status) : second.status === 409;
  if (!expected || !paid || decisions.length !== 1)
    story.fail(
      `Esperado: ${repeated ? "202, então 202 ou 200" : "202 e 409"}, uma decisão, pedido PAGO; visto: ${first.status} e ${second.status}, ${decisions.length} decisões, pedido ${await statusOf(shop, pedido.id)}.`,
    );
  else
    story.after(
      `Respostas ${first.status} e ${second.status}; o pedido está PAGO com ${decisions.length} decisão no banco do pagamento${repeated ? ` (repetições reconhecidas: ${decisions[0]?.repeticoes})` : ""}.`,
    );
}

/** The shop's own cluster nodes by short name (rabbit-1 of rabbit-1@localhost). */
const nodeNamesOf = (shop: BrokerShop) => shop.nodes.map((n) => n.node.split("@")[0] as string);
const nodeOf = (shop: BrokerShop, nome: string) =>
  shop.nodes.find((n) => n.node.startsWith(`${nome}@`));
/** Why a node action is refused: the machine's RabbitMQ is never stopped, nor a node not the shop's. */
const nodeRefusal = (shop: BrokerShop, nome: string) =>
  shop.nodes.length === 0
    ? `Esta loja usa o RabbitMQ da máquina (${shop.machineRabbit}), que o laboratório nunca para. Para ver um nó cair, rode a loja num cluster próprio: BROKER_CLUSTER_SIZE=3 npm run start:broker.`
    : nodeOf(shop, nome)
      ? null
      : `${nome} não é um nó do cluster desta loja (${nodeNamesOf(shop).join(", ")}).`;

/** Parar, Matar and Iniciar o nó: one node of the shop's own cluster; leaders or members counted. */
function nodeAction(
  shop: BrokerShop,
  acao: string,
  rotulo: string,
  resumo: string,
  act: (n: RabbitNode) => Promise<void>,
): LabAction<{ no: string }> {
  const nodeNames = nodeNamesOf(shop);
  return {
    acao,
    rotulo,
    resumo,
    campos:
      nodeNames.length > 0
        ? [
            {
              nome: "no",
              rotulo: "nó",
              tipo: "escolha",
              opcoes: nodeNames,
              padrao: nodeNames[0] as string,
            },
          ]
        : [],
    params: z.object({ no: z.string().default(nodeNames[0] ?? "") }) as unknown as z.ZodType<{
      no: string;
    }>,
    title: (p) => `${rotulo} ${p.no}`,
    refusal: (p) => nodeRefusal(shop, p.no),
    unavailable: () => (shop.nodes.length === 0 ? nodeRefusal(shop, "") : null),
    async run(p, story) {
      story.before(resumo);
      story.before(
        "Observe no desenho os nós, e o líder, as mensagens e os membros de cada fila quorum.",
      );
      const node = nodeOf(shop, p.no) as RabbitNode;
      const led = await queuesLedBy(shop, node.node);
      const refusedBefore = await answered503(shop.ordersUrl);
      const started = Date.now();
      await act(node);
      story.figure("segundos", (Date.now() - started) / 1000);
      story.line(`${rotulo} ${p.no}: feito em ${seconds(Date.now() - started)}.`);
      if (acao === "iniciar-no") await tellMembersBack(shop, node.node, started, story);
      else await tellLeadersMoved(shop, node.node, led, started, story);
      await tellAnswered503(shop, refusedBefore, story);
    },
  };
}

/** The broker edition's actions, in the page's order. */
export function brokerActions(shop: BrokerShop): AnyLabAction[] {
  return [
    anyAction(leavePaymentsAction(shop, "parar-pagamentos", "SIGTERM", "Parar pagamentos")),
    anyAction(
      leavePaymentsAction(shop, "matar-pagamentos", "SIGKILL", "Matar pagamentos (kill -9)"),
    ),
    anyAction(startPaymentsAction(shop)),
    anyAction(paymentBurst(shop)),
    anyAction(poisonAction(shop)),
    anyAction(courseAction(shop, "pagamento-repetido")),
    anyAction(courseAction(shop, "pagamento-conflitante")),
    anyAction(
      nodeAction(
        shop,
        "parar-no",
        "Parar o nó",
        "Para um nó do cluster próprio da loja (rabbitmqctl stop): as filas quorum que ele liderava elegem outro líder entre os membros em linha.",
        (n) => n.stop(),
      ),
    ),
    anyAction(
      nodeAction(
        shop,
        "matar-no",
        "Matar o nó (kill -9)",
        "Mata a VM Erlang de um nó do cluster próprio da loja: os clientes ligados a ele se reconectam a outro nó.",
        (n) => n.kill(),
      ),
    ),
    anyAction(
      nodeAction(
        shop,
        "iniciar-no",
        "Iniciar o nó",
        "Inicia de novo um nó do cluster próprio da loja: ele volta às filas quorum como seguidor e alcança o líder.",
        (n) => n.start(),
      ),
    ),
  ];
}
