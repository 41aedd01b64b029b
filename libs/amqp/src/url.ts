export interface BrokerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
  vhost: string;
}

/** amqp://user:password@host:port/vhost, each part encoded (the default vhost "/" is %2F). */
export function amqpUrl(b: BrokerAddress): string {
  return `amqp://${encodeURIComponent(b.user)}:${encodeURIComponent(b.password)}@${b.host}:${b.port}/${encodeURIComponent(b.vhost)}`;
}
