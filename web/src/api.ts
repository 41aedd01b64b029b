import type { Pedido } from "@shop/contracts";

/** The orders API's base URL: a build/dev setting. */
export const API_URL: string =
  (import.meta.env.VITE_API_URL as string | undefined) ?? "http://localhost:8080";

export interface ErroDaApi {
  erro: string;
  campos?: Record<string, string>;
}

export type ResultadoCriacao =
  | { tipo: "criado"; pedido: Pedido }
  | { tipo: "invalido"; erro: ErroDaApi }
  | { tipo: "nao-confirmado"; erro: ErroDaApi }
  | { tipo: "falhou"; mensagem: string };

export async function criarPedido(base: string, body: unknown): Promise<ResultadoCriacao> {
  let response: Response;
  try {
    response = await fetch(`${base}/pedidos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
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
  return { tipo: "falhou", mensagem: `The orders API answered ${response.status}.` };
}

export async function buscarJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return (await response.json()) as T;
}
