import { amqpUrl, managementApi } from "../../infra/rabbitmq/rabbitmq.ts";
import { testConfig } from "./env.ts";
import { uniqueName } from "./kafka.ts";

export interface TestVhost {
  vhost: string;
  /** AMQP URL with the configured credentials, pointing at this vhost. */
  url: string;
  /** Management HTTP API call; paths may use {vhost}, replaced by the encoded name. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  dispose(): Promise<void>;
}

/** A fresh RabbitMQ virtual host for one test file, deleted by dispose(). */
export async function createTestVhost(prefix = "test"): Promise<TestVhost> {
  const rabbit = testConfig().rabbit;
  const vhost = uniqueName(prefix);
  const encoded = encodeURIComponent(vhost);
  const api = (method: string, path: string, body?: unknown) =>
    managementApi(rabbit, method, path.replaceAll("{vhost}", encoded), body);

  const created = await api("PUT", "/vhosts/{vhost}");
  if (!created.ok) throw new Error(`could not create vhost ${vhost}: ${created.status}`);
  const permitted = await api("PUT", `/permissions/{vhost}/${encodeURIComponent(rabbit.user)}`, {
    configure: ".*",
    write: ".*",
    read: ".*",
  });
  if (!permitted.ok) throw new Error(`could not grant ${vhost}: ${permitted.status}`);

  return {
    vhost,
    url: amqpUrl(rabbit, vhost),
    api,
    async dispose() {
      await api("DELETE", "/vhosts/{vhost}");
    },
  };
}
