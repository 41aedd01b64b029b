import { brokerServiceEnv, readBrokerServiceConfig } from "@shop/amqp";
import { frontOriginShape, readEnvironment } from "@shop/service";
import { z } from "zod";

/** Every setting of the broker edition's orders service, read once from the environment. */
export const envSchema = brokerServiceEnv({ port: 8080, dbPath: ".data/orders.db" }).extend({
  /** The web page's origin: it reads GET /plataforma for its RabbitMQ panel (CORS). */
  ...frontOriginShape,
  /**
   * The management API(s) GET /plataforma reads, tried in turn (any node of a cluster
   * shows the whole cluster). Default: BROKER_HOST's panel on 15672.
   */
  BROKER_PANEL_URL: z
    .string()
    .regex(/^https?:\/\/[^,\s]+(,https?:\/\/[^,\s]+)*$/, {
      error: "must be http(s)://host:port[,http(s)://host:port...]",
    })
    .optional(),
  /**
   * A user with the monitoring tag and no right to any message (npm run setup makes it).
   * Unset or empty: the service runs, and GET /plataforma answers 503 saying so.
   */
  BROKER_MONITOR_USER: z.string().optional(),
  BROKER_MONITOR_PASSWORD: z.string().optional(),
});

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return {
    ...readBrokerServiceConfig(envSchema, env),
    frontOrigin: e.FRONT_ORIGIN,
    panel: {
      urls: (e.BROKER_PANEL_URL ?? `http://${e.BROKER_HOST}:15672`).split(","),
      monitor:
        e.BROKER_MONITOR_USER && e.BROKER_MONITOR_PASSWORD
          ? { user: e.BROKER_MONITOR_USER, password: e.BROKER_MONITOR_PASSWORD }
          : null,
    },
  };
}
