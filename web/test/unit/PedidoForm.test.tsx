import { cleanup, render, screen } from "@testing-library/react";
import { userEvent } from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PedidoForm } from "../../src/components/PedidoForm.tsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function respond(status: number, body: unknown) {
  const fetchMock = vi.fn(
    async () =>
      new Response(JSON.stringify(body), {
        status,
        headers: { "content-type": "application/json" },
      }),
  );
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

async function preencher(v: {
  cliente?: string;
  item?: string;
  quantidade?: string;
  preco?: string;
}) {
  const user = userEvent.setup();
  if (v.cliente !== undefined) await user.type(screen.getByLabelText("Cliente"), v.cliente);
  if (v.item !== undefined) await user.type(screen.getByLabelText("Item"), v.item);
  if (v.quantidade !== undefined) {
    await user.clear(screen.getByLabelText(/Quantidade/));
    await user.type(screen.getByLabelText(/Quantidade/), v.quantidade);
  }
  if (v.preco !== undefined) await user.type(screen.getByLabelText(/Preço unitário/), v.preco);
  return user;
}

describe("The order form", () => {
  it("When quantidade and precoUnitario are typed, then the total shows before sending, computed in cents", async () => {
    render(<PedidoForm apiUrl="http://api" />);
    await preencher({ quantidade: "3", preco: "0.1" });
    expect(screen.getByTestId("total").textContent).toMatch(/R\$\s*0,30/);
  });

  it("When the fields break the input rules, then each error shows beside its field and nothing is sent", async () => {
    const fetchMock = respond(201, {});
    render(<PedidoForm apiUrl="http://api" />);
    const user = await preencher({ cliente: "   ", quantidade: "51", preco: "1.999" });
    await user.click(screen.getByRole("button", { name: "Fazer pedido" }));
    const erroDe = (label: string | RegExp) => {
      const input = screen.getByLabelText(label);
      expect(input.getAttribute("aria-invalid")).toBe("true");
      return document.getElementById(input.getAttribute("aria-describedby") ?? "")?.textContent;
    };
    // In the page's language: each field's whole rule.
    expect(erroDe("Cliente")).toBe(
      "Informe o cliente: de 1 a 100 caracteres, sem caracteres de controle.",
    );
    expect(erroDe("Item")).toBe(
      "Informe o item: de 1 a 100 caracteres, sem caracteres de controle.",
    );
    expect(erroDe(/Quantidade/)).toBe("A quantidade deve ser um número inteiro de 1 a 50.");
    expect(erroDe(/Preço unitário/)).toMatch(/no máximo duas casas decimais/);
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("When the server answers 400, then its errors show beside each field", async () => {
    respond(400, { erro: "invalid input", campos: { item: "is not sold here" } });
    render(<PedidoForm apiUrl="http://api" />);
    const user = await preencher({ cliente: "Ana", item: "x", quantidade: "1", preco: "2" });
    await user.click(screen.getByRole("button", { name: "Fazer pedido" }));
    expect(await screen.findByText(/^Informe o item:/)).toBeTruthy();
    expect(screen.queryByText("is not sold here")).toBeNull();
    expect(screen.getByLabelText("Item").getAttribute("aria-invalid")).toBe("true");
  });

  it("When the server answers 500, then a clear message says the order was saved but not confirmed, and the form keeps what was typed", async () => {
    respond(500, {
      erro: "order 9 was saved, but Kafka did not acknowledge its PedidoCriado event in time",
    });
    render(<PedidoForm apiUrl="http://api" />);
    const user = await preencher({
      cliente: "Ana",
      item: "caneca",
      quantidade: "2",
      preco: "18.90",
    });
    await user.click(screen.getByRole("button", { name: "Fazer pedido" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(
      /salvo, mas o Kafka não confirmou o seu evento: ele só será cobrado/,
    );
    expect((screen.getByLabelText("Item") as HTMLInputElement).value).toBe("caneca");
    expect((screen.getByLabelText(/Preço unitário/) as HTMLInputElement).value).toBe("18.90");
  });

  it("When the server answers 201, then the form says so, is cleared, and sends only the contract's fields", async () => {
    const fetchMock = respond(201, { id: 5, status: "AGUARDANDO_PAGAMENTO" });
    render(<PedidoForm apiUrl="http://api" />);
    const user = await preencher({
      cliente: "Ana",
      item: "caneca",
      quantidade: "2",
      preco: "18,90",
    });
    await user.click(screen.getByRole("button", { name: "Fazer pedido" }));
    expect((await screen.findByRole("status")).textContent).toMatch(/Pedido #5 criado/);
    expect((screen.getByLabelText("Item") as HTMLInputElement).value).toBe("");
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("http://api/pedidos");
    expect(JSON.parse(String(init.body))).toEqual({
      cliente: "Ana",
      item: "caneca",
      quantidade: 2,
      precoUnitario: 18.9,
    });
  });

  it("Issue 14: when the person retries after a 500, then the same Idempotency-Key goes again; a changed order gets a new one", async () => {
    const fetchMock = respond(500, { erro: "order 7 was saved, but Kafka did not acknowledge" });
    render(<PedidoForm apiUrl="http://api" />);
    const user = await preencher({ cliente: "Ana", item: "caneca", quantidade: "2", preco: "1" });
    const botao = () => screen.getByRole("button", { name: "Fazer pedido" });
    await user.click(botao());
    await screen.findByRole("alert");
    await user.click(botao());
    await user.type(screen.getByLabelText("Item"), "s");
    await user.click(botao());
    const chaves = fetchMock.mock.calls.map(
      (c) =>
        ((c as unknown as [string, RequestInit])[1].headers as Record<string, string>)[
          "idempotency-key"
        ],
    );
    expect(chaves).toHaveLength(3);
    expect(chaves[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(chaves[1]).toBe(chaves[0]);
    expect(chaves[2]).not.toBe(chaves[0]);
  });
});
