import type { DeadLetter } from "@shop/contracts";
import { useCallback } from "react";
import { fetchJson } from "../api.ts";
import { formatTime } from "../format.ts";
import { usePolling } from "../usePolling.ts";
import { ScrollArea } from "./ScrollArea.tsx";

/** One letter: where it is, where it came from, why, when, its key and the start of its body. */
function LetterRow({ c }: { c: DeadLetter }) {
  return (
    <tr data-carta={c.onde}>
      <td>{c.onde}</td>
      <td>{c.origem}</td>
      <td>{c.motivo}</td>
      <td>{c.em ? <time dateTime={c.em}>{formatTime(c.em)}</time> : "—"}</td>
      <td>{c.chave ?? "—"}</td>
      <td>
        <code>{c.corpo.length > 80 ? `${c.corpo.slice(0, 77)}…` : c.corpo}</code>
      </td>
    </tr>
  );
}

/**
 * A dead-letter topic's letters, read-only (GET /plataforma/mortas/{topico}): where each
 * failed, why and when. Redriving is the dead-letter CLI's (npm run dlq).
 */
export function DeadLetters({
  apiUrl,
  topico,
  onClose,
}: {
  apiUrl: string;
  topico: string;
  onClose: () => void;
}) {
  const load = useCallback(
    () => fetchJson<DeadLetter[]>(`${apiUrl}/plataforma/mortas/${encodeURIComponent(topico)}`),
    [apiUrl, topico],
  );
  const { data, error } = usePolling(load, 5000);
  return (
    <section className="card" aria-labelledby="cartas-titulo" data-testid="cartas">
      <h2 id="cartas-titulo">
        Cartas mortas em {topico}{" "}
        <button type="button" onClick={onClose}>
          Fechar
        </button>
      </h2>
      <p className="discreto">
        Somente leitura: para reenviar, <code>npm run dlq -- redrive &lt;id&gt;</code>.
      </p>
      {error && (
        <p className="alerta" role="alert">
          Não foi possível ler as cartas ({error}).
        </p>
      )}
      {data && (
        <ScrollArea label={`Cartas mortas em ${topico}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Onde</th>
                <th scope="col">Origem</th>
                <th scope="col">Motivo</th>
                <th scope="col">Quando</th>
                <th scope="col">Chave</th>
                <th scope="col">Corpo</th>
              </tr>
            </thead>
            <tbody>
              {data.map((c) => (
                <LetterRow key={c.onde} c={c} />
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
    </section>
  );
}
