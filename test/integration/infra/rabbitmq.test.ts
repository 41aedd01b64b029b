import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { shopClient } from "@shop/amqp";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { createVhost, type ShopVhost } from "../../../harness/vhost.ts";
import { ensureUser } from "../../../infra/rabbitmq/rabbitmq.ts";
import { capturingLogger } from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

const rabbitmqctl = (...args: string[]) => promisify(execFile)("rabbitmqctl", args);

describe("The real RabbitMQ made ready by infra/", () => {
  let vhost: ShopVhost;
  beforeAll(async () => {
    vhost = await createVhost("harness");
  });
  afterAll(async () => {
    await vhost?.dispose();
  });

  it("When a message is published with a publisher confirm to a declared queue, then it is confirmed and consumed", async () => {
    const connection = await amqp.connect(vhost.urlAdmin);
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
    const connection = await amqp.connect(vhost.urlAdmin);
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
    const panel = overview.contexts?.find((c) => Number(c.port) === shopConfig().rabbit.panelPort);
    expect(panel?.ip).toBe("127.0.0.1");
  });

  it("Issue 14: when the services' user is used, then it has no tag, cannot use the management API, cannot declare anything but the shop's topology, and the shop's own topology works", async () => {
    const r = shopConfig().rabbit;
    const usuario = (await (
      await vhost.api("GET", `/users/${encodeURIComponent(r.user)}`)
    ).json()) as {
      tags: string[] | string;
    };
    expect([usuario.tags].flat().filter(Boolean)).toEqual([]);
    const semPainel = await fetch(`http://${r.host}:${r.panelPort}/api/overview`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${r.user}:${r.password}`).toString("base64")}`,
      },
    });
    expect(semPainel.status).toBe(401);

    // The shop's own topology, declared the way the services declare it.
    const client = shopClient(
      { host: r.host, port: r.port, vhost: vhost.vhost, user: r.user, password: r.password },
      capturingLogger("amqp"),
    );
    try {
      await client.channel();
    } finally {
      await client.close();
    }
    const conn = await amqp.connect(vhost.url);
    try {
      const ch = await conn.createChannel();
      const recusado = new Promise<Error>((resolve) => ch.once("error", resolve));
      ch.assertQueue("outra.fila").catch(() => {});
      expect(String(await recusado)).toMatch(/ACCESS_REFUSED/);
    } finally {
      await conn.close().catch(() => {});
    }
  });

  it("When a generated password begins with '-', then infra still creates the user with it (rabbitmqctl does not take it for a flag)", async () => {
    const user = `shop-test-${randomBytes(4).toString("hex")}`;
    const password = `-${randomBytes(12).toString("base64url")}`;
    const said: string[] = [];
    try {
      await ensureUser(user, password, (line) => said.push(line));
      expect(said).toContain(`rabbitmq: created user ${user}`);
      const check = await rabbitmqctl("authenticate_user", "--", user, password).catch((e) => e);
      expect(check).not.toBeInstanceOf(Error);
      // Once it authenticates, a second call changes nothing.
      await ensureUser(user, password, (line) => said.push(line));
      expect(said).toHaveLength(1);
    } finally {
      await rabbitmqctl("delete_user", "--", user).catch(() => {});
    }
  });

  it("When infra runs rabbitmqctl, then the process's event loop keeps turning meanwhile (issue 34.6: never synchronously)", async () => {
    const user = `shop-test-${randomBytes(4).toString("hex")}`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      // Two rabbitmqctl runs (authenticate, list) and one more to create: each an Erlang VM.
      await ensureUser(user, randomBytes(12).toString("base64url"), () => {});
    } finally {
      clearInterval(timer);
      await rabbitmqctl("delete_user", "--", user).catch(() => {});
    }
    // A synchronous call lets the timer fire at most once per call, after it returns.
    expect(ticks).toBeGreaterThan(10);
  });
});
