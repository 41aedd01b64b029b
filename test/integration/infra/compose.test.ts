import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { shopPermissions } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { ENTRY_POINTS, type EntryPoint, NODE_FLAGS } from "../../../infra/build.ts";
import { ROOT } from "../../../infra/config.ts";
import { CONTROLLER_IDS, clusterFailover, KAFKA_VERSION } from "../../../infra/kafka/kafka.ts";
import { readConfig as ordersConfig } from "../../../orders-api/src/config.ts";

/** Docker cannot run here, so compose.yaml is checked by parsing it. */
interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  profiles?: string[];
  volumes?: string[];
}
const compose = parse(readFileSync(join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;

/** The source file behind a service's command: `dist/<name>.mjs` is built from ENTRADAS. */
function fonte(service: ComposeService): string | undefined {
  const built = service.command?.find((part) => /^dist\/.+\.mjs$/.test(part));
  const name = built?.slice("dist/".length, -".mjs".length);
  return name && name in ENTRY_POINTS ? ENTRY_POINTS[name as EntryPoint] : undefined;
}

describe("compose.yaml, for users who have Docker", () => {
  it("When parsed, then Kafka is KRaft with 9092 for the host and 19092 for containers", () => {
    const kafka = services.kafka as ComposeService;
    // The image is the Kafka that infra/kafka/pom.xml brings to this machine.
    expect(kafka.image).toBe(`apache/kafka:${KAFKA_VERSION}`);
    expect(kafka.ports).toEqual(["127.0.0.1:9092:9092"]);
    const env = kafka.environment ?? {};
    expect(env.KAFKA_PROCESS_ROLES).toBe("broker,controller");
    expect(env.KAFKA_ADVERTISED_LISTENERS).toContain("kafka:19092");
    expect(env.KAFKA_ADVERTISED_LISTENERS).toContain("localhost:9092");
    expect(env.KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR).toBe("1");
    expect(env.KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR).toBe("1");
    expect(env.KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS).toBe("0");
  });

  it("When parsed, then the Kafka web panel is on 8090 and reads the internal listener", () => {
    const panel = services["kafka-panel"] as ComposeService;
    expect(panel.ports?.[0]).toMatch(/^127\.0\.0\.1:8090:/);
    expect(panel.environment?.KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS).toBe("kafka:19092");
  });

  it("When parsed, then RabbitMQ's panel is published on 127.0.0.1 only and credentials come from the environment", () => {
    const rabbit = services.rabbitmq as ComposeService;
    expect(rabbit.image).toMatch(/management/);
    expect(rabbit.ports).toContain("127.0.0.1:5672:5672");
    const panelPorts = (rabbit.ports ?? []).filter((p) => p.endsWith(":15672"));
    expect(panelPorts).toEqual(["127.0.0.1:15672:15672"]);
    expect(rabbit.environment?.RABBITMQ_DEFAULT_USER).toMatch(/^\$\{BROKER_ADMIN_USER[:?}]/);
    expect(rabbit.environment?.RABBITMQ_DEFAULT_PASS).toMatch(/^\$\{BROKER_ADMIN_PASSWORD[:?}]/);
  });

  it("When parsed, then every service of both editions is there with the spec's ports", () => {
    const expected: Record<string, string> = {
      "orders-api": "127.0.0.1:8080:8080",
      payments: "127.0.0.1:5001:5001",
      "broker-orders": "127.0.0.1:8080:8080",
      "broker-payments": "127.0.0.1:8081:8081",
    };
    for (const [name, port] of Object.entries(expected)) {
      expect(services[name]?.ports, name).toContain(port);
    }
    // Both editions use 8080, so they are separate profiles.
    expect(services["orders-api"]?.profiles).toEqual(["event-log"]);
    expect(services["broker-orders"]?.profiles).toEqual(["broker"]);
    expect(services.web?.profiles).toEqual(["event-log", "scale-out"]);
  });

  it("Issue 37: when parsed, then the scale-out profile has PostgreSQL (loopback port, health check, passwords from .env, a least-privilege user made at its first start) and two orders APIs on it, 8080 and 8082", () => {
    const pg = services.postgres as ComposeService & { healthcheck?: { test: string[] } };
    expect(pg.profiles).toEqual(["scale-out"]);
    expect(pg.ports).toEqual(["127.0.0.1:5432:5432"]);
    expect(pg.healthcheck?.test).toContain("pg_isready");
    expect(pg.environment?.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_ADMIN_PASSWORD:\?/);
    expect(pg.environment?.ORDERS_DB_PASSWORD).toMatch(/^\$\{ORDERS_DB_PASSWORD:\?/);
    const init = (compose as unknown as { configs: Record<string, { content: string }> }).configs[
      "postgres-orders-user"
    ]?.content;
    expect(init).toMatch(/CREATE ROLE :"user" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE/);
    expect(init).toMatch(/CREATE DATABASE pedidos OWNER :"user"/);
    for (const [name, port] of [
      ["orders-api-1", "8080"],
      ["orders-api-2", "8082"],
    ] as const) {
      const api = services[name] as ComposeService;
      expect(api.profiles, name).toEqual(["scale-out"]);
      expect(api.ports, name).toEqual([`127.0.0.1:${port}:${port}`]);
      expect(api.environment?.PORTA, name).toBe(port);
      expect(api.environment?.DATABASE_URL, name).toMatch(
        /^postgres:\/\/\$\{ORDERS_DB_USER.*@postgres:5432\/pedidos$/,
      );
      expect(fonte(api), name).toBe("orders-api/src/main.ts");
    }
    expect(services.payments?.profiles).toEqual(["event-log", "scale-out"]);
  });

  it("When a service's config exists, then every variable compose sets is one its config reads, and ports agree", async () => {
    const checked: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      const main = fonte(service);
      if (!main) continue;
      const configFile = join(ROOT, main.replace("main.ts", "config.ts"));
      if (!existsSync(configFile)) continue;
      const { envSchema } = (await import(configFile)) as { envSchema: z.ZodObject };
      const known = Object.keys(envSchema.shape);
      for (const variable of Object.keys(service.environment ?? {})) {
        expect(known, `${name} sets ${variable}`).toContain(variable);
      }
      const port = service.environment?.PORTA;
      if (port) expect(service.ports).toContain(`127.0.0.1:${port}:${port}`);
      checked.push(name);
    }
    // Grows as services are built; every compose service with a main.ts has a config.ts.
    for (const [name, service] of Object.entries(services)) {
      const main = fonte(service);
      if (main && existsSync(join(ROOT, main))) expect(checked).toContain(name);
    }
  });

  it("When parsed, then every Node service runs its bundle from npm run build (which the image runs) with the V8 settings the benchmarks measured", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
    const node = Object.entries(services).filter(([, s]) => s.command?.[0] === "node");
    expect(node.map(([name]) => name).sort()).toEqual([
      "broker-orders",
      "broker-payments",
      "orders-api",
      "orders-api-1",
      "orders-api-2",
      "payments",
    ]);
    for (const [name, service] of node) {
      // The scale-out profile's instances run the orders API's bundle.
      const bundle = name.replace(/^orders-api-\d$/, "orders-api");
      expect(service.command, name).toEqual(["node", ...NODE_FLAGS, `dist/${bundle}.mjs`]);
      expect(fonte(service), name).toBeDefined();
    }
  });

  it("Issue 20: when parsed, then the monitoring profile has Jaeger (its UI and OTLP on 127.0.0.1 only), and every Node service passes OTEL_EXPORTER_OTLP_ENDPOINT on, unset by default", () => {
    const jaeger = services.jaeger as ComposeService;
    expect(jaeger.profiles).toEqual(["monitoring"]);
    expect(jaeger.image).toMatch(/^jaegertracing\/jaeger:2\.\d+\.\d+$/);
    expect(jaeger.ports).toEqual(["127.0.0.1:16686:16686", "127.0.0.1:4318:4318"]);
    // Compose's interpolation: the caller's value, or empty (no export) when unset.
    const passedOn = ["$", "{OTEL_EXPORTER_OTLP_ENDPOINT:-}"].join("");
    for (const name of ["orders-api", "payments", "broker-orders", "broker-payments"])
      expect(services[name]?.environment?.OTEL_EXPORTER_OTLP_ENDPOINT, name).toBe(passedOn);
  });

  it("When parsed, then the optional monitoring profile scrapes /metrics of every service at its compose port, and Grafana's dashboard reads metrics the services export", () => {
    const prometheus = services.prometheus as ComposeService;
    const grafana = services.grafana as ComposeService;
    expect(prometheus.profiles).toEqual(["monitoring"]);
    expect(grafana.profiles).toEqual(["monitoring"]);
    // Every mounted file exists in the repository.
    for (const v of [...(prometheus.volumes ?? []), ...(grafana.volumes ?? [])])
      expect(existsSync(join(ROOT, (v.split(":")[0] as string).replace(/^\.\//, ""))), v).toBe(
        true,
      );

    const config = parse(readFileSync(join(ROOT, "infra/monitoring/prometheus.yml"), "utf8")) as {
      scrape_configs: { metrics_path: string; static_configs: { targets: string[] }[] }[];
    };
    const targets = config.scrape_configs.flatMap((c) => {
      expect(c.metrics_path).toBe("/metrics");
      return c.static_configs.flatMap((s) => s.targets);
    });
    for (const name of ["orders-api", "payments", "broker-orders", "broker-payments"]) {
      const port = services[name]?.environment?.PORTA;
      expect(targets, name).toContain(`${name}:${port}`);
    }

    const datasource = parse(
      readFileSync(
        join(ROOT, "infra/monitoring/grafana/provisioning/datasources/prometheus.yml"),
        "utf8",
      ),
    ) as { datasources: { url: string; uid: string }[] };
    expect(datasource.datasources[0]?.url).toBe("http://prometheus:9090");
    const dashboard = JSON.parse(
      readFileSync(join(ROOT, "infra/monitoring/grafana/dashboards/shop.json"), "utf8"),
    ) as { panels: { targets: { expr: string }[] }[] };
    const exported = [
      "shop_http_request_duration_seconds",
      "shop_messages_published_total",
      "shop_messages_confirmed_total",
      "shop_messages_consumed_total",
      "shop_messages_failed_total",
      "shop_messages_dead_lettered_total",
      "shop_consumer_lag",
      "shop_outbox_pending",
    ];
    // ...names the code really registers:
    const code = [
      "libs/service/src/metrics.ts",
      "libs/kafka/src/lag.ts",
      "orders-api/src/messaging/outbox-relay.ts",
    ]
      .map((f) => readFileSync(join(ROOT, f), "utf8"))
      .join("\n");
    for (const e of exported) expect(code, e).toContain(`"${e}"`);
    const used = dashboard.panels.flatMap((p) =>
      p.targets.flatMap((t) => t.expr.match(/shop_[a-z_]+/g) ?? []),
    );
    for (const m of used)
      expect(
        exported.some((e) => m === e || m.startsWith(`${e}_`)),
        m,
      ).toBe(true);
    for (const e of exported)
      expect(
        used.some((m) => m.startsWith(e)),
        e,
      ).toBe(true);
  });

  it("Issue 17: when parsed, then the cluster profile has three KRaft brokers of one cluster and one quorum of three, with 3 replicas and min.insync.replicas 2, each on its own 127.0.0.1 port", () => {
    const kafkas = ["kafka-1", "kafka-2", "kafka-3"].map((n) => services[n] as ComposeService);
    const ids = new Set<string>();
    const hostPorts = new Set<string>();
    for (const [i, k] of kafkas.entries()) {
      expect(k.profiles).toEqual(["cluster"]);
      expect(k.image).toBe(services.kafka?.image);
      const env = k.environment ?? {};
      expect(env.KAFKA_NODE_ID).toBe(String(i + 1));
      expect(env.KAFKA_PROCESS_ROLES).toBe("broker");
      expect(env.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe(
        "101@kafka-controller-1:9093,102@kafka-controller-2:9093,103@kafka-controller-3:9093",
      );
      expect(env.KAFKA_DEFAULT_REPLICATION_FACTOR).toBe("3");
      expect(env.KAFKA_MIN_INSYNC_REPLICAS).toBe("2");
      expect(env.KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR).toBe("3");
      expect(env.KAFKA_TRANSACTION_STATE_LOG_MIN_ISR).toBe("2");
      // Base64url of 16 bytes: what KRaft's storage format accepts as a cluster id.
      expect(Buffer.from(env.CLUSTER_ID ?? "", "base64url")).toHaveLength(16);
      ids.add(env.CLUSTER_ID ?? "");
      const [port] = k.ports ?? [];
      const host = (port as string).split(":")[1] as string;
      expect(env.KAFKA_ADVERTISED_LISTENERS).toContain(`localhost:${host}`);
      expect(env.KAFKA_ADVERTISED_LISTENERS).toContain(`kafka-${i + 1}:19092`);
      hostPorts.add(host);
    }
    expect(hostPorts.size).toBe(3);
    expect(hostPorts.has("9092")).toBe(false); // beside the single broker, not on its port
    // Issue 33: the quorum is three controllers of their own, the voters the brokers name.
    for (const i of [1, 2, 3]) {
      const c = services[`kafka-controller-${i}`] as ComposeService;
      expect(c.profiles).toEqual(["cluster"]);
      expect(c.image).toBe(services.kafka?.image);
      expect(c.ports).toBeUndefined();
      const env = c.environment ?? {};
      expect(env.KAFKA_NODE_ID).toBe(String(CONTROLLER_IDS + i));
      expect(env.KAFKA_PROCESS_ROLES).toBe("controller");
      expect(env.KAFKA_LISTENERS).toBe("CONTROLLER://:9093");
      expect(env.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe(
        kafkas[0]?.environment?.KAFKA_CONTROLLER_QUORUM_VOTERS,
      );
      ids.add(env.CLUSTER_ID ?? "");
    }
    expect(ids.size).toBe(1);
  });

  it("Issue 33: when parsed, then the cluster profile's Kafka brokers and controllers have infra's failover settings, property by property", () => {
    const settings = clusterFailover
      .split("\n")
      .filter((line) => /^[a-z]/.test(line))
      .map((line) => line.split("=") as [string, string]);
    expect(settings.length).toBeGreaterThanOrEqual(4);
    for (const name of [1, 2, 3].flatMap((i) => [`kafka-${i}`, `kafka-controller-${i}`])) {
      const env = services[name]?.environment ?? {};
      for (const [key, value] of settings)
        expect(env[`KAFKA_${key.toUpperCase().replaceAll(".", "_")}`], `${name}: ${key}`).toBe(
          value,
        );
    }
  });

  it("Issue 17: when parsed, then the cluster profile has three RabbitMQ nodes that discover each other, share a cookie from .env, and get the shop's users once all are healthy", () => {
    const config = (compose as unknown as { configs: Record<string, { content: string }> }).configs[
      "rabbitmq-cluster-conf"
    ]?.content;
    for (const i of [1, 2, 3]) {
      const r = services[`rabbitmq-${i}`] as ComposeService & { hostname?: string };
      expect(r.profiles).toEqual(["cluster"]);
      expect(r.hostname).toBe(`rabbitmq-${i}`);
      expect(r.ports).toEqual([`127.0.0.1:${5681 + i}:5672`, `127.0.0.1:${15681 + i}:15672`]);
      expect(r.environment?.RABBITMQ_ERLANG_COOKIE).toMatch(/^\$\{BROKER_ERLANG_COOKIE:\?/);
      expect(config).toContain(
        `cluster_formation.classic_config.nodes.${i} = rabbit@rabbitmq-${i}`,
      );
    }
    const users = services["rabbitmq-cluster-users"] as ComposeService & {
      depends_on?: Record<string, { condition: string }>;
    };
    expect(users.profiles).toEqual(["cluster"]);
    expect(users.command).toEqual(services["rabbitmq-users"]?.command);
    expect(users.environment?.API).toBe("http://rabbitmq-1:15672/api");
    expect(Object.keys(users.depends_on ?? {}).sort()).toEqual([
      "rabbitmq-1",
      "rabbitmq-2",
      "rabbitmq-3",
    ]);
    expect(readFileSync(join(ROOT, ".env.example"), "utf8")).toMatch(
      /^BROKER_ERLANG_COOKIE=<broker-erlang-cookie>$/m,
    );
  });

  it("When parsed, then no literal password is committed in it", () => {
    const text = readFileSync(join(ROOT, "compose.yaml"), "utf8");
    expect(text).not.toMatch(/^\s*[A-Z_]*PASS(WORD)?:\s*(?!\$\{)\S/m);
  });

  it("Issue 14: when parsed, then every published port is bound to 127.0.0.1, Grafana has no anonymous access and its admin password comes from .env", () => {
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
    const grafana = services.grafana?.environment ?? {};
    expect(grafana.GF_AUTH_ANONYMOUS_ENABLED).toBe("false");
    expect(grafana.GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?/);
    expect(readFileSync(join(ROOT, ".env.example"), "utf8")).toMatch(
      /^GRAFANA_ADMIN_PASSWORD=<grafana-password>$/m,
    );
  });

  it("Issue 14: when FRONT_ORIGIN is * (or not one origin), then the orders API refuses to start, naming it", () => {
    for (const origem of [
      "*",
      "http://a.example, http://b.example",
      "localhost:5173",
      "http://*.example",
    ]) {
      expect(() => ordersConfig({ FRONT_ORIGIN: origem }), origem).toThrow(/FRONT_ORIGIN/);
    }
    expect(ordersConfig({ FRONT_ORIGIN: "https://loja.example:8443" }).frontOrigin).toBe(
      "https://loja.example:8443",
    );
    expect(services["orders-api"]?.environment?.FRONT_ORIGIN).toBe("http://localhost:5173");
  });

  it("Issue 14: when parsed, then the broker services use a user of their own, made by rabbitmq-users with no tag and exactly the shop's permission pattern, and start after it", () => {
    const users = services["rabbitmq-users"] as ComposeService & {
      depends_on?: Record<string, { condition: string }>;
    };
    expect(users.profiles).toEqual(["broker"]);
    expect(users.environment?.APP).toMatch(/^\$\{BROKER_USER[:?}]/);
    expect(users.environment?.ADMIN).toMatch(/^\$\{BROKER_ADMIN_USER[:?}]/);
    const p = shopPermissions();
    expect(users.environment?.PERMITIDO?.replaceAll("$$", "$")).toBe(p.configure);
    expect(p.read).toBe(p.configure);
    expect(users.environment?.PERMITIDO_ESCREVER?.replaceAll("$$", "$")).toBe(p.write);
    expect(users.command?.join("\n")).toMatch(/"tags\\":\\"\\"/);
    for (const name of ["broker-orders", "broker-payments"]) {
      const s = services[name] as ComposeService & {
        depends_on?: Record<string, { condition: string }>;
      };
      expect(s.environment?.BROKER_USER, name).toMatch(/^\$\{BROKER_USER[:?}]/);
      expect(s.depends_on?.["rabbitmq-users"]?.condition, name).toBe(
        "service_completed_successfully",
      );
    }
  });
});

describe("The production image and compose a team could deploy (issue 20)", () => {
  const raw = parse(readFileSync(join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
    services: Record<
      string,
      ComposeService & {
        healthcheck?: { test?: string[] };
        depends_on?: Record<string, { condition?: string }> | string[];
        build?: { target?: string; args?: Record<string, string> } | string;
      }
    >;
  };
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  /** The Dockerfile's stages by name: their lines. */
  const stages = new Map<string, string[]>();
  let current = "";
  for (const line of dockerfile.split("\n")) {
    const from = line.match(/^FROM (\S+) AS (\S+)/);
    if (from) {
      current = from[2] as string;
      stages.set(current, [line]);
    } else stages.get(current)?.push(line);
  }

  it("When the Dockerfile is read, then the build stage needs no compiler and prunes to production dependencies, and the runtime stage has Node 24, those only and a non-root user", () => {
    expect([...stages.keys()]).toEqual(["build", "web", "runtime"]);
    const build = (stages.get("build") ?? []).join("\n");
    expect(build).toMatch(/^FROM node:24-bookworm-slim AS build/m);
    // better-sqlite3 13 ships its binary: nothing compiles, so no toolchain is installed.
    expect(build).not.toMatch(/apt-get|g\+\+/);
    // Pruned, not installed again: the patched kafkajs (patches/) stays as npm ci left it.
    expect(build).toMatch(/npm ci --no-audit/);
    expect(build).toMatch(/npm prune --omit=dev --omit=optional --ignore-scripts/);
    const runtime = (stages.get("runtime") ?? []).join("\n");
    expect(runtime).toMatch(/^FROM node:24-bookworm-slim AS runtime/);
    expect(runtime).not.toMatch(/apt-get|g\+\+|npm ci|npm install/);
    // Everything it holds comes from the build stage: no source, no dev dependency.
    for (const copy of runtime.split("\n").filter((l) => l.startsWith("COPY"))) {
      expect(copy).toMatch(/^COPY --from=build \/app\/(package\.json|node_modules|dist) /);
    }
    expect(runtime).toMatch(/^USER node$/m);
    expect((stages.get("web") ?? []).join("\n")).toMatch(/nginx-unprivileged/);
  });

  it("When parsed, then the web page is the built static one served by nginx, not Vite's dev server", () => {
    const web = raw.services.web;
    expect(web?.build).toMatchObject({
      target: "web",
      args: { VITE_API_URL: "http://localhost:8080" },
    });
    expect(web?.command).toBeUndefined();
    expect(web?.ports).toEqual(["127.0.0.1:5173:8080"]);
    for (const name of ["orders-api", "payments", "broker-orders", "broker-payments"]) {
      expect(raw.services[name]?.build, name).toMatchObject({ target: "runtime" });
    }
  });

  it("When parsed, then every long-running service has a health check and every dependency waits on a condition", () => {
    const oneShot = new Set(["rabbitmq-users", "rabbitmq-cluster-users"]);
    for (const [name, service] of Object.entries(raw.services)) {
      if (!oneShot.has(name)) expect(service.healthcheck?.test, name).toBeDefined();
      const deps = service.depends_on ?? {};
      expect(Array.isArray(deps), `${name}: depends_on needs conditions`).toBe(false);
      for (const [dep, how] of Object.entries(deps)) {
        const wanted = oneShot.has(dep) ? "service_completed_successfully" : "service_healthy";
        expect(how?.condition, `${name} -> ${dep}`).toBe(wanted);
        expect(raw.services[dep], `${name} -> ${dep}`).toBeDefined();
      }
    }
    // The Node services check their own HTTP, on the port they listen on.
    for (const name of ["orders-api", "payments", "broker-orders", "broker-payments"]) {
      const s = raw.services[name];
      expect(s?.healthcheck?.test?.join(" "), name).toContain(
        `127.0.0.1:${s?.environment?.PORTA}/`,
      );
    }
  });

  it("When parsed, then the Kafka panel is kafbat/kafka-ui, the maintained fork of the retired provectuslabs image", () => {
    expect(raw.services["kafka-panel"]?.image).toMatch(/^kafbat\/kafka-ui:v\d+\.\d+\.\d+$/);
  });
});
