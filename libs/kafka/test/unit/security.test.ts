import { describe, expect, it } from "vitest";
import { kafkaProblem, kafkaSecurityOf, securityProblem } from "../../src/index.ts";

describe("Kafka's TLS and SASL settings (issue 17)", () => {
  it("When nothing is set, then there is neither TLS nor SASL", () => {
    expect(kafkaSecurityOf({ KAFKA_SSL: "false" })).toEqual({ ssl: null, sasl: null });
  });

  it("When TLS, a CA file and SCRAM are set, then the client gets them all", () => {
    expect(
      kafkaSecurityOf({
        KAFKA_SSL: "true",
        KAFKA_SSL_CA_FILE: "/ca.pem",
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_SASL_USER: "u",
        KAFKA_SASL_PASSWORD: "p",
      }),
    ).toEqual({
      ssl: { caFile: "/ca.pem" },
      sasl: { mechanism: "scram-sha-512", username: "u", password: "p" },
    });
  });

  it("When a mechanism comes without its user or password, or a CA file without TLS, then the configuration is refused naming the settings", () => {
    expect(() => kafkaSecurityOf({ KAFKA_SSL: "false", KAFKA_SASL_MECHANISM: "plain" })).toThrow(
      /KAFKA_SASL_USER and KAFKA_SASL_PASSWORD/,
    );
    expect(() => kafkaSecurityOf({ KAFKA_SSL: "false", KAFKA_SSL_CA_FILE: "/ca.pem" })).toThrow(
      /KAFKA_SSL_CA_FILE.*KAFKA_SSL=true/,
    );
  });

  it("When a connection fails for refused credentials or an untrusted certificate, then it is a problem to fix, named; a broker that is down is not", () => {
    const sasl = Object.assign(new Error("SASL SCRAM SHA256 authentication failed: bad"), {
      name: "KafkaJSSASLAuthenticationError",
    });
    expect(securityProblem(sasl)?.message).toMatch(/KAFKA_SASL_PASSWORD/);
    const tls = Object.assign(
      new Error("Connection error: self-signed certificate in certificate chain"),
      {
        code: "SELF_SIGNED_CERT_IN_CHAIN",
      },
    );
    expect(securityProblem(tls)?.message).toMatch(/KAFKA_SSL_CA_FILE/);
    expect(
      securityProblem(new Error("Connection error: connect ECONNREFUSED 127.0.0.1:9092")),
    ).toBeNull();
  });
});

describe("Kafka problems said for a person (issue 34)", () => {
  it("When Kafka cannot be reached or refuses the credentials, then the sentence says where and what to check", () => {
    const brokers = ["127.0.0.1:1"];
    expect(
      kafkaProblem(brokers, new Error("Connection error: connect ECONNREFUSED 127.0.0.1:1")),
    ).toBe(
      "Kafka at 127.0.0.1:1 cannot be reached (Connection error: connect ECONNREFUSED 127.0.0.1:1): is it running? npm run infra -- kafka start",
    );
    const sasl = Object.assign(new Error("SASL SCRAM-SHA-256 authentication failed"), {
      name: "KafkaJSSASLAuthenticationError",
    });
    expect(kafkaProblem(brokers, sasl)).toMatch(/^Kafka at 127\.0\.0\.1:1: .*KAFKA_SASL_PASSWORD/);
    expect(kafkaProblem(brokers, new Error("something else"))).toBe(
      "Kafka at 127.0.0.1:1: something else",
    );
  });
});
