import type { HttpError, Pedido } from "@shop/contracts";

/** The orders API's base URL: a build/dev setting. */
export const API_URL: string =
  (import.meta.env.VITE_API_URL as string | undefined) ?? "http://localhost:8080";

/**
 * The broker edition's orders service (VITE_BROKER_API_URL): set, the page also shows its
 * RabbitMQ panel (nodes, quorum queues' leaders and members). Unset, it does not.
 */
export const BROKER_API_URL: string | null =
  (import.meta.env.VITE_BROKER_API_URL as string | undefined) ?? null;

/** The API's error body: the one the contracts define. */
export type ApiError = HttpError;

export type CreateResult =
  | { kind: "created"; pedido: Pedido }
  | { kind: "invalid"; error: ApiError }
  | { kind: "not-confirmed"; error: ApiError }
  | { kind: "failed"; message: string };

/**
 * POST /pedidos with an Idempotency-Key: the form sends one key per order and the same key
 * again when the person retries after an error, so a retry never makes a second order.
 */
export async function createPedido(
  base: string,
  body: unknown,
  key: string,
): Promise<CreateResult> {
  let response: Response;
  try {
    response = await fetch(`${base}/pedidos`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
    });
  } catch {
    return {
      kind: "failed",
      message: `Não foi possível falar com a API de pedidos em ${base}. Nada foi salvo.`,
    };
  }
  const json = (await response.json().catch(() => ({}))) as unknown;
  if (response.status === 201) return { kind: "created", pedido: json as Pedido };
  if (response.status === 400) return { kind: "invalid", error: json as ApiError };
  if (response.status === 500) return { kind: "not-confirmed", error: json as ApiError };
  if (response.status === 409)
    return {
      kind: "failed",
      message:
        "A primeira tentativa deste pedido ainda está sendo respondida: tente de novo em instantes.",
    };
  return { kind: "failed", message: `A API de pedidos respondeu ${response.status}.` };
}

export async function fetchJson<T>(url: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch {
    throw new Error(`sem resposta de ${url}`);
  }
  if (!response.ok) throw new Error(`${url} respondeu ${response.status}`);
  return (await response.json()) as T;
}
