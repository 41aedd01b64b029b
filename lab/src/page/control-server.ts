import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { LabSession, Refusal } from "./session.ts";

/**
 * The page's lab control API: what lets the web page stop and kill the processes `npm start`
 * started. Every request crosses the same gate, in this order, and each refusal is a
 * sentence the page shows (docs/lab-page.md, "Safety"):
 *
 *  1. it listens on 127.0.0.1 only, and answers only to a Host of 127.0.0.1 or localhost
 *     on its port (a DNS-rebinding page that resolves its own name to 127.0.0.1 is refused);
 *  2. the request's Origin must be the page's (another web page in the browser cannot forge
 *     it; a request with no Origin is refused too);
 *  3. it must carry the token minted at start (`Authorization: Bearer …`), which only the
 *     address that npm start printed holds (another local process has no token);
 *  4. then the session decides: one action at a time, and only on what this npm start
 *     started (session.ts).
 */

export interface ControlOptions {
  /** The page's origins (http://localhost:5173 and http://127.0.0.1:5173 under npm start). */
  pageOrigins: string[];
  /** 0: any free port (npm start hands the port to the page through VITE_LAB_URL). */
  port?: number;
  /** Minted here unless given (a test gives none either: it reads `token`). */
  token?: string;
}

export interface RunningControl {
  url: string;
  token: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 4096;

/** A fresh token: 32 random bytes, URL-safe (it travels in the page's address). */
export const mintToken = () => randomBytes(32).toString("base64url");

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why this request may not reach the lab, or null when it may. Pure over the request's
 * headers, so that each refusal is tested on its own (test/unit/lab-page-scope.test.ts).
 */
export function gateRefusal(
  headers: IncomingMessage["headers"],
  { port, token, pageOrigins }: { port: number; token: string; pageOrigins: string[] },
  { preflight = false } = {},
): Refusal | null {
  const host = headers.host ?? "";
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
    return {
      status: 403,
      erro: "host-recusado",
      mensagem: `O controle do laboratório só atende por 127.0.0.1:${port}; esta requisição chegou como ${JSON.stringify(host)}.`,
    };
  const origin = headers.origin;
  if (origin === undefined || !pageOrigins.includes(origin))
    return {
      status: 403,
      erro: "origem-recusada",
      mensagem: `Só a página do laboratório (${pageOrigins[0]}) pode agir; esta requisição veio de ${origin === undefined ? "fora de uma página (sem Origin)" : origin}.`,
    };
  if (preflight) return null;
  const auth = headers.authorization ?? "";
  if (!auth.startsWith("Bearer ") || auth.length === "Bearer ".length)
    return {
      status: 401,
      erro: "token-ausente",
      mensagem:
        "Falta o token do laboratório: abra a página pelo endereço que o npm start imprimiu (com #lab=…).",
    };
  if (!sameSecret(auth.slice("Bearer ".length), token))
    return {
      status: 401,
      erro: "token-recusado",
      mensagem:
        "Token recusado: ele não é o deste npm start (foi reiniciado?). Abra o endereço que ele imprimiu agora.",
    };
  return null;
}

function answer(res: ServerResponse, status: number, body: unknown, origin?: string): void {
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    vary: "Origin",
  };
  if (origin) headers["access-control-allow-origin"] = origin;
  res.writeHead(status, headers).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new RangeError("too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? {} : JSON.parse(text);
}

/**
 * Starts the control API of `session` on 127.0.0.1. Routes: GET /laboratorio (the lab's
 * state: actions, the one running, the history) and POST /laboratorio/acoes/{acao}.
 */
export async function startControlServer(
  session: LabSession,
  options: ControlOptions,
): Promise<RunningControl> {
  const key = options.token ?? mintToken();
  let port = 0;
  const server = createServer((req, res) => {
    const origin = req.headers.origin;
    const preflight = req.method === "OPTIONS";
    const refusal = gateRefusal(
      req.headers,
      { port, token: key, pageOrigins: options.pageOrigins },
      { preflight },
    );
    // A refused request's answer is readable by the page only when its Origin is the page's
    // (so that the page can say why); no other origin learns anything.
    const allowed = origin && options.pageOrigins.includes(origin) ? origin : undefined;
    if (refusal) return answer(res, refusal.status, refusal, allowed);
    if (preflight) {
      res
        .writeHead(204, {
          "access-control-allow-origin": allowed as string,
          "access-control-allow-methods": "GET, POST",
          "access-control-allow-headers": "authorization, content-type",
          "access-control-max-age": "600",
          vary: "Origin",
        })
        .end();
      return;
    }
    void route(req, res, session, allowed as string);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token: key,
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // A page's kept-alive connection would hold the close open: npm start is stopping.
        server.closeAllConnections();
      }),
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  session: LabSession,
  origin: string,
): Promise<void> {
  const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
  if (path === "/laboratorio" && req.method === "GET")
    return answer(res, 200, session.state(), origin);
  const action = /^\/laboratorio\/acoes\/([a-z0-9-]+)$/.exec(path)?.[1];
  if (action === undefined || (req.method !== "POST" && req.method !== "GET"))
    return answer(
      res,
      404,
      { erro: "rota-desconhecida", mensagem: `Não há ${req.method} ${path} no laboratório.` },
      origin,
    );
  if (req.method !== "POST")
    return answer(
      res,
      405,
      { erro: "metodo-recusado", mensagem: "Uma ação se pede com POST." },
      origin,
    );
  let body: unknown;
  try {
    body = await readBody(req);
  } catch (error) {
    const large = error instanceof RangeError;
    return answer(
      res,
      large ? 413 : 400,
      {
        erro: large ? "corpo-grande-demais" : "json-invalido",
        mensagem: large
          ? `O corpo de uma ação tem no máximo ${MAX_BODY} bytes.`
          : "O corpo da ação não é JSON.",
      },
      origin,
    );
  }
  const outcome = await session.begin(action, body);
  if ("status" in outcome) return answer(res, outcome.status, outcome, origin);
  answer(res, 202, outcome, origin);
}
