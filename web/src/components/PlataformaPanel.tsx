import type { Plataforma } from "@shop/contracts";

export function PlataformaPanel({
  plataforma,
  error,
}: {
  plataforma: Plataforma | null;
  error: string | null;
}) {
  return (
    <section className="card" aria-labelledby="plataforma-titulo">
      <h2 id="plataforma-titulo">Plataforma (Kafka)</h2>
      {error && (
        <p className="alerta" role="alert">
          Platform data unavailable ({error}).
        </p>
      )}
      {plataforma?.outbox && (
        <p data-testid="outbox">
          Outbox: <strong>{plataforma.outbox.pendentes}</strong> event(s) waiting for Kafka
          {plataforma.outbox.pendentes > 0 &&
            ` (oldest ${Math.round(plataforma.outbox.idadeMaisAntigoMs / 1000)} s)`}
        </p>
      )}
      {plataforma?.outbox && plataforma.outbox.postosDeLado.length > 0 && (
        <div className="erro" data-testid="outbox-postos-de-lado">
          <p>
            Set aside: <strong>{plataforma.outbox.postosDeLado.length}</strong> event(s) Kafka
            refused for good; later orders went on.
          </p>
          <ul>
            {plataforma.outbox.postosDeLado.map((p) => (
              <li key={p.pedidoId}>
                order #{p.pedidoId}: {p.motivo}
              </li>
            ))}
          </ul>
        </div>
      )}
      {plataforma?.cluster && (
        <p data-testid="brokers">
          Brokers up:{" "}
          {plataforma.cluster.brokers.map((b) => (
            <span key={b.nodeId} className="broker">
              {b.nodeId}
              {b.nodeId === plataforma.cluster?.controller ? " (controller)" : ""}{" "}
            </span>
          ))}
        </p>
      )}
      {plataforma?.topicos.map((t) => {
        const grupos = t.particoes[0]?.grupos.map((g) => g.grupo) ?? [];
        return (
          <div className="rolagem" key={t.topic}>
            <table>
              <caption>{t.topic}</caption>
              <thead>
                <tr>
                  <th scope="col">Partição</th>
                  <th scope="col">Líder</th>
                  <th scope="col">Réplicas / em sincronia (ISR)</th>
                  <th scope="col">Fim (end offset)</th>
                  {grupos.map((g) => (
                    <th scope="col" key={g}>
                      {g}: offset / lag
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {t.particoes.map((p) => (
                  <tr key={p.partition}>
                    <td className="num">{p.partition}</td>
                    <td className="num" data-testid={`lider-${t.topic}-${p.partition}`}>
                      {p.leader >= 0 ? (
                        p.leader
                      ) : (
                        <span className="alerta">no leader: partition offline</span>
                      )}
                    </td>
                    <td data-testid={`isr-${t.topic}-${p.partition}`}>
                      [{p.replicas.join(", ")}] / [{p.isr.join(", ")}]
                      {p.isr.length < p.replicas.length && (
                        <span className="lag"> under-replicated</span>
                      )}
                    </td>
                    <td className="num">{p.endOffset}</td>
                    {p.grupos.map((g) => (
                      <td className="num" key={g.grupo}>
                        {g.committedOffset ?? "—"} /{" "}
                        <span className={g.lag > 0 ? "lag" : undefined}>{g.lag}</span>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      })}
      {plataforma?.grupos
        .filter((g) => g.membros.length > 0 || g.grupo.endsWith("pagamentos"))
        .map((g) => (
          <div key={g.grupo}>
            <h3>
              Grupo {g.grupo} <small>({g.estado})</small>
            </h3>
            {g.membros.length === 0 ? (
              <p>No active member.</p>
            ) : (
              <ul className="membros">
                {g.membros.map((m) => (
                  <li key={m.memberId} data-cliente={m.clientId}>
                    <strong>{m.clientId}</strong> ({m.host}):{" "}
                    {Object.entries(m.particoes)
                      .map(([topic, ps]) => `${topic} [${ps.join(", ")}]`)
                      .join("; ") || "idle (no partition)"}
                  </li>
                ))}
              </ul>
            )}
          </div>
        ))}
    </section>
  );
}
