import type { QueueCount } from "@shop/amqp";
import { ERROR_QUEUES, type PlataformaBroker, QUEUES } from "@shop/contracts";
import { AppError, cachedFor, withTimeLimit } from "@shop/service";

interface ManagementQueue {
  name: string;
  type?: string;
  node?: string;
  leader?: string;
  members?: string[];
  online?: string[];
  messages?: number;
  messages_ready?: number;
  messages_unacknowledged?: number;
  consumers?: number;
  arguments?: Record<string, unknown>;
}

interface ManagementBinding {
  source: string;
  destination: string;
  destination_type: string;
  routing_key: string;
}

const SHOP_QUEUES = new Set<string>([...Object.values(QUEUES), ...Object.values(ERROR_QUEUES)]);

/**
 * How long the panel waits for RabbitMQ's own counts (AmqpClient.countQueues) before it
 * shows the management API's statistics instead: a quorum queue without a leader (a
 * majority of its nodes down) answers nothing until one is elected.
 */
const COUNT_WAIT_MS = 1_000;

/**
 * The RabbitMQ side of the platform panel, read from the management API as a user with the
 * monitoring tag: the nodes and whether each runs, and each of the shop's queues with its
 * leader, members and members online, the exchanges that route to it and where it
 * dead-letters (the topology as the broker holds it, not as the code declares it). Any
 * node's API shows the whole cluster, so the URLs are tried in turn until one answers. Kept
 * for a second, like the Kafka panel, so that browsers polling every 2 s cost the broker one
 * round of requests a second.
 *
 * A queue's ready messages and consumers are RabbitMQ's counts at the read (`count`, over the
 * service's own connection) when it gives them within COUNT_WAIT_MS; its unacked messages
 * are the management API's statistics, which lag by up to 5 s (10 and more for a quorum
 * queue on a busy node).
 */
export function platformReader(
  panel: { urls: string[]; monitor: { user: string; password: string } | null },
  vhost: string,
  count: (queues: readonly string[]) => Promise<Map<string, QueueCount>>,
) {
  async function readAny(): Promise<PlataformaBroker> {
    if (!panel.monitor)
      throw new AppError(
        "painel-indisponivel",
        "the broker panel needs a monitoring user: set BROKER_MONITOR_USER and BROKER_MONITOR_PASSWORD (npm run setup writes them)",
        503,
      );
    const auth = `Basic ${Buffer.from(`${panel.monitor.user}:${panel.monitor.password}`).toString("base64")}`;
    const counted = withTimeLimit(
      count([...SHOP_QUEUES]),
      COUNT_WAIT_MS,
      () => new Error("RabbitMQ did not count the queues in time"),
    ).catch(() => null);
    const failures: string[] = [];
    for (const base of panel.urls) {
      try {
        return withCounts(await readFrom(base, auth, vhost), await counted);
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      }
    }
    throw new AppError(
      "painel-indisponivel",
      `no management API answered (BROKER_PANEL_URL): ${failures.join("; ")}`,
      503,
    );
  }

  return { read: cachedFor(1000, readAny) };
}

/**
 * The panel with each queue's ready messages and consumers as RabbitMQ counted them (none:
 * the statistics stay); its messages are then the ready ones and the unacked ones.
 */
function withCounts(
  read: PlataformaBroker,
  counts: Map<string, QueueCount> | null,
): PlataformaBroker {
  if (!counts) return read;
  return {
    ...read,
    filas: read.filas.map((f) => {
      const c = counts.get(f.nome);
      if (!c) return f;
      return {
        ...f,
        prontas: c.ready,
        consumidores: c.consumers,
        mensagens: c.ready + (f.semAck ?? 0),
      };
    }),
  };
}

/** The nodes and the shop's queues, as one management API (`base`) shows them. */
async function readFrom(base: string, auth: string, vhost: string): Promise<PlataformaBroker> {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${base}/api${path}`, {
      headers: { authorization: auth },
      signal: AbortSignal.timeout(3000),
    });
    if (!res.ok) throw new Error(`${base}/api${path} answered ${res.status}`);
    return (await res.json()) as T;
  };
  const v = encodeURIComponent(vhost);
  const [nodes, queues, bindings, exchanges] = await Promise.all([
    get<{ name: string; running: boolean }[]>("/nodes?columns=name,running"),
    get<ManagementQueue[]>(
      `/queues/${v}?columns=name,type,node,leader,members,online,messages,messages_ready,messages_unacknowledged,consumers,arguments`,
    ),
    get<ManagementBinding[]>(`/bindings/${v}`),
    get<{ name: string; type: string }[]>(`/exchanges/${v}?columns=name,type`),
  ]);
  const typeOf = new Map(exchanges.map((e) => [e.name, e.type]));
  const routesTo = (queue: string) =>
    bindings
      .filter((b) => b.destination_type === "queue" && b.destination === queue && b.source !== "")
      .map((b) => ({ exchange: b.source, tipo: typeOf.get(b.source) ?? "?", chave: b.routing_key }))
      .sort((a, b) => a.exchange.localeCompare(b.exchange));
  return {
    nos: nodes
      .map((n) => ({ nome: n.name, ativo: n.running }))
      .sort((a, b) => a.nome.localeCompare(b.nome)),
    filas: queues
      .filter((q) => SHOP_QUEUES.has(q.name))
      .map((q) => ({
        nome: q.name,
        tipo: q.type ?? "classic",
        lider: q.leader ?? q.node ?? null,
        membros: [...(q.members ?? (q.node ? [q.node] : []))].sort(),
        emLinha: [...(q.online ?? (q.node ? [q.node] : []))].sort(),
        mensagens: q.messages ?? null,
        prontas: q.messages_ready ?? null,
        semAck: q.messages_unacknowledged ?? null,
        consumidores: q.consumers ?? null,
        de: routesTo(q.name),
        cartasMortasPara:
          typeof q.arguments?.["x-dead-letter-routing-key"] === "string"
            ? (q.arguments["x-dead-letter-routing-key"] as string)
            : null,
        limiteDeEntregas:
          typeof q.arguments?.["x-delivery-limit"] === "number"
            ? (q.arguments["x-delivery-limit"] as number)
            : null,
      }))
      .sort((a, b) => a.nome.localeCompare(b.nome)),
    lidoDe: base,
    lidoEm: new Date().toISOString(),
  };
}
