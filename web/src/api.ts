import type { HttpError, Pedido } from "@shop/contracts";

/** The orders API's base URL: a build/dev setting. */
export const API_URL: string =
  (import.meta.env.VITE_API_URL as string | undefined) ?? "http://localhost:8080";

/** The API's error body: the one the contracts define. */
export type ErroDaApi = HttpError;

export type ResultadoCriacao =
  | { tipo: "criado"; pedido: Pedido }
  | { tipo: "invalido"; erro: ErroDaApi }
  | { tipo: "nao-confirmado"; erro: ErroDaApi }
  | { tipo: "falhou"; mensagem: string };

/**
 * POST /pedidos with an Idempotency-Key: the form sends one key per order and the same key
 * again when the person retries after an error, so a retry never makes a second order.
 */
export async function criarPedido(
  base: string,
  body: unknown,
  chave: string,
): Promise<ResultadoCriacao> {
  let response: Response;
  try {
    response = await fetch(`${base}/pedidos`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": chave },
      body: JSON.stringify(body),
    });
  } catch {
    return {
      tipo: "falhou",
      mensagem: `Cannot reach the orders API at ${base}. Nothing was saved.`,
    };
  }
  const json = (await response.json().catch(() => ({}))) as unknown;
  if (response.status === 201) return { tipo: "criado", pedido: json as Pedido };
  if (response.status === 400) return { tipo: "invalido", erro: json as ErroDaApi };
  if (response.status === 500) return { tipo: "nao-confirmado", erro: json as ErroDaApi };
  if (response.status === 409)
    return {
      tipo: "falhou",
      mensagem: "The first attempt of this order is still being answered: try again in a moment.",
    };
  return { tipo: "falhou", mensagem: `The orders API answered ${response.status}.` };
}

export async function buscarJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return (await response.json()) as T;
}
