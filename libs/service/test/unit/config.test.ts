import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readConfig as analyticsConfig } from "../../../../analytics/src/config.ts";
import { readConfig as brokerOrdersConfig } from "../../../../broker/orders/src/config.ts";
import { readConfig as brokerPaymentsConfig } from "../../../../broker/payments/src/config.ts";
import { readConfig as dlqConfig } from "../../../../dlq/src/config.ts";
import { readInfraConfig } from "../../../../infra/config.ts";
import { readConfig as ordersConfig } from "../../../../orders-api/src/config.ts";
import { readConfig as paymentsConfig } from "../../../../payments/src/config.ts";
import { readEnvironment } from "../../src/config.ts";

const schema = z.object({
  PORTA: z.coerce.number().int().min(0).max(65535).default(8080),
  BROKER_PASSWORD: z.string({ error: "BROKER_PASSWORD is not set" }).min(1),
});

describe("Configuration from the environment (readEnvironment)", () => {
  it("When every variable fits, then the typed values come back with the defaults filled in", () => {
    expect(readEnvironment(schema, { BROKER_PASSWORD: "s" })).toEqual({
      PORTA: 8080,
      BROKER_PASSWORD: "s",
    });
  });

  it("When variables do not fit, then the error names each one and why, a line each", () => {
    expect(() => readEnvironment(schema, { PORTA: "99999" })).toThrow(
      /^Invalid configuration:\n {2}PORTA: .*65535.*\n {2}BROKER_PASSWORD: BROKER_PASSWORD is not set$/,
    );
  });
});

describe("One reader of each setting, for every program (issue 15)", () => {
  const kafkaDe = [ordersConfig, paymentsConfig, analyticsConfig, dlqConfig];
  it("When KAFKA_BROKERS is not host:port[,host:port], then every Kafka program and infra refuse it alike", () => {
    for (const ler of kafkaDe)
      expect(() => ler({ KAFKA_BROKERS: "kafka" })).toThrow(/KAFKA_BROKERS: must be host:port/);
    expect(() => readInfraConfig({ KAFKA_BROKERS: "kafka" })).toThrow(
      /KAFKA_BROKERS: must be host:port/,
    );
  });

  it("When BROKER_PORT is out of range or a password still holds its placeholder, then services, infra and the dlq CLI refuse it alike", () => {
    const base = {
      BROKER_USER: "shop",
      BROKER_PASSWORD: "x",
      BROKER_ADMIN_USER: "a",
      BROKER_ADMIN_PASSWORD: "y",
    };
    for (const ler of [brokerOrdersConfig, brokerPaymentsConfig, readInfraConfig, dlqConfig]) {
      expect(() => ler({ ...base, BROKER_PORT: "70000" })).toThrow(/BROKER_PORT/);
    }
    for (const ler of [brokerOrdersConfig, brokerPaymentsConfig, readInfraConfig]) {
      expect(() => ler({ ...base, BROKER_PASSWORD: "<broker-password>" })).toThrow(
        /still holds its placeholder/,
      );
    }
  });
});
