import type { LabField, LabState, Relato } from "@shop/contracts";
import { useCallback, useEffect, useState } from "react";
import { LabRefusal, labToken, readLab, runLabAction } from "../lab.ts";
import { usePolling } from "../usePolling.ts";

/** While an action runs its lines come every second; otherwise the page's 2 s. */
const RUNNING_POLL_MS = 1000;
const IDLE_POLL_MS = 2000;

function initialValues(campos: LabField[]): Record<string, string | number> {
  return Object.fromEntries(campos.map((c) => [c.nome, c.padrao]));
}

function Action({
  a,
  busy,
  onRun,
}: {
  a: LabState["acoes"][number];
  busy: boolean;
  onRun: (acao: string, params: Record<string, unknown>) => void;
}) {
  const [values, setValues] = useState(() => initialValues(a.campos));
  const id = (c: LabField) => `lab-${a.acao}-${c.nome}`;
  return (
    <li className="acao">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onRun(a.acao, values);
        }}
      >
        {a.campos.map((c) => (
          <span key={c.nome} className="campo-acao">
            <label htmlFor={id(c)} className="sr-only">
              {c.rotulo}
            </label>
            {c.tipo === "escolha" ? (
              <select
                id={id(c)}
                value={String(values[c.nome])}
                onChange={(e) => setValues({ ...values, [c.nome]: e.target.value })}
              >
                {c.opcoes?.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            ) : (
              <input
                id={id(c)}
                type="number"
                min={c.min}
                max={c.max}
                value={values[c.nome]}
                onChange={(e) => setValues({ ...values, [c.nome]: Number(e.target.value) })}
              />
            )}
          </span>
        ))}
        <button type="submit" disabled={busy || a.indisponivel !== null} data-acao={a.acao}>
          {a.rotulo}
        </button>
      </form>
      <span className="discreto">{a.indisponivel ?? a.resumo}</span>
    </li>
  );
}

function Story({ r, open }: { r: Relato; open: boolean }) {
  const figures = Object.entries(r.numeros);
  return (
    <details
      open={open}
      className="relato"
      data-relato={r.acao}
      data-resultado={r.resultado ?? "andamento"}
    >
      <summary>
        {r.titulo} —{" "}
        {r.resultado === null ? "em andamento" : r.resultado === "ok" ? "feito" : "falhou"}
      </summary>
      {r.antes.map((l) => (
        <p key={l}>{l}</p>
      ))}
      {r.linhas.length > 0 && (
        <pre className="linhas" aria-live="polite">
          {r.linhas.join("\n")}
        </pre>
      )}
      {r.depois.map((l) => (
        <p key={l} className={r.resultado === "falhou" ? "alerta" : "depois"}>
          {l}
        </p>
      ))}
      {figures.length > 0 && (
        <dl className="numeros">
          {figures.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd data-numero={k}>{v}</dd>
            </div>
          ))}
        </dl>
      )}
    </details>
  );
}

/** The processes npm start owns, an action each, the story running now and the ones before. */
function LabActions({
  state,
  busy,
  onRun,
}: {
  state: LabState;
  busy: boolean;
  onRun: (acao: string, params: Record<string, unknown>) => void;
}) {
  return (
    <>
      <p className="discreto">
        Processos deste npm start:{" "}
        {state.processos.map((p) => `${p.nome} (${p.estado})`).join(", ")}
      </p>
      <ul className="acoes">
        {state.acoes.map((a) => (
          <Action key={a.acao} a={a} busy={busy} onRun={onRun} />
        ))}
      </ul>
      {state.emAndamento && <Story r={state.emAndamento} open />}
      {state.historico.length > 0 && (
        <>
          <h3>O que você fez</h3>
          {state.historico.map((r, i) => (
            <Story key={r.id} r={r} open={i === 0} />
          ))}
        </>
      )}
    </>
  );
}

/** Without the address npm start printed, the page only says how to get it. */
function NoToken() {
  return (
    <p className="alerta" role="status">
      Para agir na loja, abra a página pelo endereço que o npm start imprimiu (termina em #lab=…):
      só quem tem esse endereço pode parar ou matar processos.
    </p>
  );
}

/**
 * The lab on the page: the actions on the running shop (start, stop, kill or pause a
 * process, stop the broker, a poison message, a burst, a replay, an experiment), the one
 * running now with its lines as they come, and the history of what the learner did.
 */
export function Laboratorio({
  labUrl,
  onProcesses,
}: {
  labUrl: string;
  /** The processes npm start owns, at each reading (the picture marks the stopped ones). */
  onProcesses?: (processos: LabState["processos"]) => void;
}) {
  const [token] = useState(labToken);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const load = useCallback(
    () => (token ? readLab(labUrl, token) : Promise.reject(new LabRefusal("sem token"))),
    [labUrl, token],
  );
  const lab = usePolling(load, running ? RUNNING_POLL_MS : IDLE_POLL_MS);
  const state = lab.data;
  const busy = state?.emAndamento != null;
  useEffect(() => {
    if (state) onProcesses?.(state.processos);
  }, [state, onProcesses]);
  if (running !== busy && state) setRunning(busy);

  const run = (acao: string, params: Record<string, unknown>) => {
    if (!token) return;
    setRefusal(null);
    runLabAction(labUrl, token, acao, params).then(
      () => {
        setRunning(true);
        lab.refresh();
      },
      (error: unknown) => setRefusal(error instanceof Error ? error.message : String(error)),
    );
  };

  return (
    <section className="card laboratorio" aria-labelledby="laboratorio-titulo">
      <h2 id="laboratorio-titulo">Laboratório</h2>
      {!token ? (
        <NoToken />
      ) : (
        <>
          {lab.error && !state && (
            <p className="alerta" role="status">
              {lab.error}
            </p>
          )}
          {refusal && (
            <p className="alerta" role="alert" data-recusa>
              {refusal}
            </p>
          )}
          {state && <LabActions state={state} busy={busy} onRun={run} />}
        </>
      )}
    </section>
  );
}
