import type { PlataformaBroker } from "@shop/contracts";

/**
 * The RabbitMQ side of the platform panel, from the broker edition's GET /plataforma: the
 * nodes and whether each runs, and each of the shop's queues with its leader and members,
 * a member that is not online flagged, and a queue without a leader flagged.
 */
export function BrokerPanel({
  plataforma,
  error,
}: {
  plataforma: PlataformaBroker | null;
  error: string | null;
}) {
  return (
    <section className="card" aria-labelledby="broker-titulo">
      <h2 id="broker-titulo">Plataforma (RabbitMQ)</h2>
      {error && (
        <p className="alerta" role="alert">
          Broker data unavailable ({error}).
        </p>
      )}
      {plataforma && (
        <>
          <p data-testid="nos">
            Nodes:{" "}
            {plataforma.nos.map((n) => (
              <span key={n.nome} className={n.ativo ? undefined : "lag"}>
                {n.nome} {n.ativo ? "(running)" : "(down)"}{" "}
              </span>
            ))}
          </p>
          <div className="rolagem">
            <table>
              <caption>Queues (read from {plataforma.lidoDe})</caption>
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col">Type</th>
                  <th scope="col">Leader</th>
                  <th scope="col">Members (online)</th>
                  <th scope="col">Messages</th>
                </tr>
              </thead>
              <tbody>
                {plataforma.filas.map((f) => {
                  const offline = f.membros.filter((m) => !f.emLinha.includes(m));
                  return (
                    <tr key={f.nome}>
                      <td>{f.nome}</td>
                      <td>{f.tipo}</td>
                      <td data-testid={`lider-${f.nome}`}>
                        {f.lider ?? <span className="alerta">no leader</span>}
                      </td>
                      <td data-testid={`membros-${f.nome}`}>
                        {f.emLinha.length} of {f.membros.length}
                        {offline.length > 0 && (
                          <span className="lag"> offline: {offline.join(", ")}</span>
                        )}
                      </td>
                      <td className="num">{f.mensagens ?? "—"}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
