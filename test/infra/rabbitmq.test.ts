import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../helpers/env.ts";
import { createTestVhost, type TestVhost } from "../helpers/rabbit.ts";
import { waitFor } from "../helpers/wait.ts";

describe("The real RabbitMQ made ready by infra/", () => {
  let vhost: TestVhost;
  beforeAll(async () => {
    vhost = await createTestVhost("harness");
  });
  afterAll(async () => {
    await vhost?.dispose();
  });

  it("When a message is published with a publisher confirm to a declared queue, then it is confirmed and consumed", async () => {
    const connection = await amqp.connect(vhost.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue("harness.q", { durable: true });
    const body = Buffer.from(JSON.stringify({ versao: 1, hello: "world" }));

    await new Promise<void>((resolve, reject) => {
      channel.sendToQueue(
        "harness.q",
        body,
        { contentType: "application/json", deliveryMode: 2 },
        (err) => (err ? reject(err) : resolve()),
      );
    });

    const received: amqp.ConsumeMessage[] = [];
    await channel.consume("harness.q", (msg) => {
      if (msg) {
        received.push(msg);
        channel.ack(msg);
      }
    });
    await waitFor(() => received.length === 1, { what: "the message" });
    expect(received[0]?.content.toString()).toBe(body.toString());
    expect(received[0]?.properties.contentType).toBe("application/json");
    expect(received[0]?.properties.deliveryMode).toBe(2);
    await connection.close();
  });

  it("When a mandatory message has no route, then the broker returns it to the publisher", async () => {
    const connection = await amqp.connect(vhost.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertExchange("harness.x", "direct", { durable: true });
    const returned = new Promise<amqp.Message>((resolve) => channel.once("return", resolve));
    channel.publish("harness.x", "nowhere", Buffer.from("{}"), { mandatory: true });
    const msg = await returned;
    expect(msg.fields.routingKey).toBe("nowhere");
    await connection.close();
  });

  it("When the management panel is asked where it listens, then it is on 127.0.0.1 only", async () => {
    const res = await vhost.api("GET", "/overview");
    expect(res.status).toBe(200);
    const overview = (await res.json()) as { contexts?: { ip?: string; port?: string | number }[] };
    const panel = overview.contexts?.find((c) => Number(c.port) === testConfig().rabbit.panelPort);
    expect(panel?.ip).toBe("127.0.0.1");
  });
});
