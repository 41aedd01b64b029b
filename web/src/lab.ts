import type { LabState, Relato } from "@shop/contracts";

/**
 * The page's side of the lab's control API (lab/src/page/control-server.ts). Its address
 * comes from VITE_LAB_URL, which only `npm start` / `npm run start:broker` sets; its token
 * from the address npm start printed (http://localhost:5173/#lab=<token>): the fragment never
 * reaches a server, and the page moves it to this tab's sessionStorage and out of the
 * address bar, so that a reload keeps it and a shared screenshot or link does not carry it.
 */
export const LAB_URL: string | null = (import.meta.env.VITE_LAB_URL as string | undefined) ?? null;

const KEY = "laboratorio-token";

/** The token from the address (moved to sessionStorage), or the one kept before; null: none. */
export function labToken(): string | null {
  const found = /(?:^#|&)lab=([A-Za-z0-9_-]+)/.exec(window.location.hash)?.[1];
  if (found) {
    sessionStorage.setItem(KEY, found);
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  return sessionStorage.getItem(KEY);
}

/** A refusal of the control API, in its own words. */
export class LabRefusal extends Error {}

async function call<T>(base: string, token: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new LabRefusal(`O controle do laboratório não responde em ${base} (o npm start parou?).`);
  }
  const json = (await res.json().catch(() => ({}))) as { mensagem?: string };
  if (!res.ok) throw new LabRefusal(json.mensagem ?? `O laboratório respondeu ${res.status}.`);
  return json as T;
}

export const readLab = (base: string, token: string) => call<LabState>(base, token, "/laboratorio");

export const runLabAction = (
  base: string,
  token: string,
  acao: string,
  params: Record<string, unknown>,
) => call<Relato>(base, token, `/laboratorio/acoes/${acao}`, params);
