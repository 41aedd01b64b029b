import { describe, expect, it } from "vitest";
import { amqpUrl, brokerAddress, securityProblem } from "../../src/index.ts";

const base = {
  BROKER_HOST: "rabbit.example",
  BROKER_PORT: 5671,
  BROKER_VHOST: "/",
  BROKER_USER: "shop",
  BROKER_PASSWORD: "p",
};

describe("RabbitMQ's TLS settings (issue 17)", () => {
  it("When BROKER_TLS is true, then the URL is amqps:// and the CA file is kept for the socket", () => {
    const b = brokerAddress({ ...base, BROKER_TLS: "true", BROKER_CA_FILE: "/ca.pem" });
    expect(amqpUrl(b)).toMatch(/^amqps:\/\/shop:p@rabbit\.example:5671\/%2F$/);
    expect(b.tls).toEqual({ caFile: "/ca.pem" });
    expect(amqpUrl(brokerAddress(base))).toMatch(/^amqp:\/\//);
  });

  it("When a CA file is given without TLS, then the configuration is refused naming both settings", () => {
    expect(() => brokerAddress({ ...base, BROKER_CA_FILE: "/ca.pem" })).toThrow(
      /BROKER_CA_FILE.*BROKER_TLS=true/,
    );
  });

  it("When a connection fails for refused credentials or an untrusted certificate, then it is a problem to fix, named; a node that is down is not", () => {
    expect(
      securityProblem(
        new Error(
          'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
        ),
      )?.message,
    ).toMatch(/BROKER_PASSWORD/);
    expect(
      securityProblem(
        Object.assign(new Error("unable to verify the first certificate"), {
          code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        }),
      )?.message,
    ).toMatch(/BROKER_CA_FILE/);
    expect(securityProblem(new Error("connect ECONNREFUSED 127.0.0.1:5672"))).toBeNull();
    // A down node whose port holds "403" is still a down node, retried (issue 34).
    expect(securityProblem(new Error("connect ECONNREFUSED 127.0.0.1:40397"))).toBeNull();
  });
});
