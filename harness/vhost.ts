import { amqpUrl, amqpUrlAdmin, managementApi, shopGrants } from "../infra/rabbitmq/rabbitmq.ts";
import { shopConfig, uniqueName } from "./env.ts";

export interface ShopVhost {
  vhost: string;
  /** AMQP URL of the services' user (the shop's exchanges and queues only), to this vhost. */
  url: string;
  /** AMQP URL of the administrator, to this vhost (for queues of a test's own). */
  urlAdmin: string;
  /** Management HTTP API call; paths may use {vhost}, replaced by the encoded name. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  /**
   * What the broker says about this vhost's queues (ready, unacked, consumers) and its
   * alarms, one line each: for a test's failure message when a wait on a queue times out.
   */
  estado(): Promise<string>;
  dispose(): Promise<void>;
}

/** A fresh RabbitMQ virtual host for one run (a test file, a benchmark), deleted by dispose(). */
export async function createVhost(prefix = "test"): Promise<ShopVhost> {
  const rabbit = shopConfig().rabbit;
  const vhost = uniqueName(prefix);
  const encoded = encodeURIComponent(vhost);
  const api = (method: string, path: string, body?: unknown) =>
    managementApi(rabbit, method, path.replaceAll("{vhost}", encoded), body);

  const created = await api("PUT", "/vhosts/{vhost}");
  if (!created.ok) throw new Error(`could not create vhost ${vhost}: ${created.status}`);
  // The same grants infra gives on the default vhost (shopGrants).
  for (const g of shopGrants(rabbit)) {
    const permitted = await api(
      "PUT",
      `/permissions/{vhost}/${encodeURIComponent(g.user)}`,
      g.permissions,
    );
    if (!permitted.ok)
      throw new Error(`could not grant ${vhost} to ${g.user}: ${permitted.status}`);
  }

  return {
    vhost,
    url: amqpUrl(rabbit, vhost),
    urlAdmin: amqpUrlAdmin(rabbit, vhost),
    api,
    async estado() {
      try {
        const queues = (await (
          await api(
            "GET",
            "/queues/{vhost}?columns=name,type,state,messages_ready,messages_unacknowledged,consumers",
          )
        ).json()) as Record<string, unknown>[];
        const alarms = await api("GET", "/health/checks/alarms");
        return [
          `broker alarms: ${alarms.ok ? "none" : await alarms.text()}`,
          // The counts come from the broker's statistics, emitted every 5 s: "?" until then.
          ...queues.map((q) => {
            const n = (k: string) => String(q[k] ?? "?");
            return `queue ${n("name")} (${n("type")}, ${n("state")}): ready ${n("messages_ready")}, unacked ${n("messages_unacknowledged")}, consumers ${n("consumers")}`;
          }),
        ].join("\n");
      } catch (error) {
        return `broker state unavailable: ${(error as Error).message}`;
      }
    },
    async dispose() {
      await api("DELETE", "/vhosts/{vhost}");
    },
  };
}
