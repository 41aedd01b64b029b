import type { PlataformaBroker } from "@shop/contracts";
import { formatTimeOfDay } from "../format.ts";
import { Breakable } from "./Breakable.tsx";
import { ScrollArea } from "./ScrollArea.tsx";

/**
 * One queue: its name and type, messages (an .erros queue with letters flagged), consumers,
 * leader, members online. The type is beside the name, not a column of its own: six columns
 * beside a cluster's node names were a few pixels too wide for the panel at 1280 px.
 */
function QueueRow({ f }: { f: PlataformaBroker["filas"][number] }) {
  const offline = f.membros.filter((m) => !f.emLinha.includes(m));
  const errors = f.nome.endsWith(".erros") && (f.mensagens ?? 0) > 0;
  return (
    <tr data-fila={f.nome}>
      <td data-label="Fila">
        <Breakable text={f.nome} /> <small>({f.tipo})</small>
      </td>
      <td className="num" data-label="Mensagens" data-testid={`mensagens-${f.nome}`}>
        <span className={errors ? "lag" : undefined}>{f.mensagens ?? "—"}</span>
      </td>
      <td className="num" data-label="Consumidores">
        {f.consumidores ?? "—"}
      </td>
      <td data-label="Líder" data-testid={`lider-${f.nome}`}>
        {f.lider ? <Breakable text={f.lider} /> : <span className="alerta">sem líder</span>}
      </td>
      <td data-label="Membros (em linha)" data-testid={`membros-${f.nome}`}>
        {f.emLinha.length} de {f.membros.length}
        {offline.length > 0 && (
          <span className="lag">
            {" "}
            fora de linha: <Breakable text={offline.join(", ")} />
          </span>
        )}
      </td>
    </tr>
  );
}

/**
 * The RabbitMQ side of the platform, from the broker edition's GET /plataforma (which reads
 * the management API with its own monitoring user: the browser never sees a credential):
 * the nodes and whether each runs, and each of the shop's queues with its messages,
 * consumers, leader and members; a member offline, a queue without a leader and letters
 * waiting in an `.erros` queue are flagged.
 */
export function BrokerPanel({
  plataforma,
  error,
  updatedAt = null,
}: {
  plataforma: PlataformaBroker | null;
  error: string | null;
  updatedAt?: Date | null;
}) {
  return (
    <section className="card" aria-labelledby="broker-titulo">
      <h2 id="broker-titulo">
        Plataforma (RabbitMQ) {updatedAt && <small>lida às {formatTimeOfDay(updatedAt)}</small>}
      </h2>
      {error && (
        <p className="alerta" role="alert">
          Dados do broker indisponíveis ({error})
          {updatedAt ? `; mostrando os de ${formatTimeOfDay(updatedAt)}.` : "."}
        </p>
      )}
      {plataforma && (
        <>
          <p data-testid="nos">
            Nós:{" "}
            {plataforma.nos.map((n) => (
              <span key={n.nome} className={n.ativo ? undefined : "lag"}>
                {n.nome} {n.ativo ? "(no ar)" : "(fora do ar)"}{" "}
              </span>
            ))}
          </p>
          <ScrollArea label="Filas do RabbitMQ">
            <table className="empilha filas">
              <caption>Filas (lidas de {plataforma.lidoDe})</caption>
              <thead>
                <tr>
                  <th scope="col">Fila</th>
                  <th scope="col">Mensagens</th>
                  <th scope="col">Consumidores</th>
                  <th scope="col">Líder</th>
                  <th scope="col">Membros (em linha)</th>
                </tr>
              </thead>
              <tbody>
                {plataforma.filas.map((f) => (
                  <QueueRow key={f.nome} f={f} />
                ))}
              </tbody>
            </table>
          </ScrollArea>
        </>
      )}
    </section>
  );
}
