export interface BrokerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
  vhost: string;
  /** The nodes of a cluster (BROKER_NODES), tried in turn; without it, host:port alone. */
  nodes?: { host: string; port: number }[];
  /** amqps:// (BROKER_TLS), trusting the CA in caFile (BROKER_CA_FILE) or the system's. */
  tls?: { caFile: string | null };
}

/** amqp(s)://user:password@host:port/vhost, each part encoded (the default vhost "/" is %2F). */
export function amqpUrl(b: BrokerAddress): string {
  return `${b.tls ? "amqps" : "amqp"}://${encodeURIComponent(b.user)}:${encodeURIComponent(b.password)}@${b.host}:${b.port}/${encodeURIComponent(b.vhost)}`;
}

/** One URL per node to try, in order: the cluster's nodes, or host:port alone. */
export function amqpUrls(b: BrokerAddress): string[] {
  return b.nodes && b.nodes.length > 0
    ? b.nodes.map((n) => amqpUrl({ ...b, host: n.host, port: n.port }))
    : [amqpUrl(b)];
}
