import { NovoPedidoSchema } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import { fingerprintOf } from "../../src/pedidos.ts";

describe("Idempotency-Key fingerprint", () => {
  it("When a body is parsed by the contract, then its fingerprint is the one kept keys were saved with", () => {
    // A key saved by an earlier version is compared with this for 48 h: a new optional
    // field given a default by the schema (or fields reordered) would change it, and every
    // repeat of an older request would get a 422. Give a new field its default in the
    // domain (newPedido), not in the schema.
    const body = { cliente: " Ana ", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
    expect(fingerprintOf(NovoPedidoSchema.parse(body))).toBe(
      "2116ee0ba5f7942be0c15b0d62f9f21c94700ffad13850d5f4296d012cf857fd",
    );
  });
});
