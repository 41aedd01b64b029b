import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { partOf } from "../../bench/profile.ts";
import { ROOT } from "../../infra/config.ts";

/** npm run bench -- --profile: a profile's self time told by where its code lives (issue 57). */
describe("partOf, the part of a CPU profile's frame", () => {
  const at = (path: string) => `file://${join(ROOT, path)}`;

  it("When a frame is a package's, then it is that package's, a scoped one by its scope and name", () => {
    expect(partOf(at("node_modules/express/lib/router/index.js"), "handle")).toBe("express");
    expect(partOf(at("node_modules/@opentelemetry/api/build/src/api/context.js"), "with")).toBe(
      "@opentelemetry/api",
    );
    expect(partOf(at("node_modules/kafkajs/node_modules/long/src/long.js"), "fromBits")).toBe(
      "long",
    );
  });

  it("When a frame is the shop's own, then it is its folder, a library or a broker service by two", () => {
    expect(partOf(at("orders-api/src/pedidos.ts"), "placePedido")).toBe("orders-api");
    expect(partOf(at("libs/kafka/src/publisher.ts"), "publishBatch")).toBe("libs/kafka");
    expect(partOf(at("broker/orders/src/main.ts"), "")).toBe("broker/orders");
    expect(partOf(at("dist/orders-api.mjs"), "placePedido")).toBe("dist/orders-api.mjs");
  });

  it("When a frame is Node's or V8's, then it says so", () => {
    expect(partOf("node:internal/streams/writable", "write")).toBe("node");
    expect(partOf("", "(garbage collector)")).toBe("(garbage collector)");
    expect(partOf("", "(idle)")).toBe("(idle)");
    expect(partOf("", "stringify")).toBe("(native)");
  });
});
