import {
  formatCents,
  multiplyCents,
  NovoPedidoSchema,
  toCents,
  validationError,
} from "@shop/contracts";
import { type FormEvent, useId, useState } from "react";
import { criarPedido, type ResultadoCriacao } from "../api.ts";
import { formatarCentavos } from "../formato.ts";

type Campo = "cliente" | "item" | "quantidade" | "precoUnitario";
type Valores = Record<Campo, string>;
const VAZIO: Valores = { cliente: "", item: "", quantidade: "1", precoUnitario: "" };

const ROTULOS: Record<Campo, string> = {
  cliente: "Cliente",
  item: "Item",
  quantidade: "Quantidade (1 a 50)",
  precoUnitario: "Preço unitário (R$)",
};

/** The same contract the server validates with: one source of the input rules. */
export function validar(v: Valores) {
  const corpo = {
    cliente: v.cliente,
    item: v.item,
    quantidade: v.quantidade.trim() === "" ? Number.NaN : Number(v.quantidade),
    precoUnitario:
      v.precoUnitario.trim() === "" ? Number.NaN : Number(v.precoUnitario.replace(",", ".")),
  };
  const r = NovoPedidoSchema.safeParse(corpo);
  return r.success
    ? { ok: true as const, corpo: r.data, erros: {} as Record<string, string> }
    : { ok: false as const, corpo, erros: validationError(r.error.issues).campos ?? {} };
}

/** quantidade × precoUnitario in cents, or null while either is not valid yet. */
export function totalEmCentavos(v: Valores): number | null {
  const quantidade = Number(v.quantidade);
  const preco = Number(v.precoUnitario.replace(",", "."));
  if (!Number.isInteger(quantidade) || quantidade < 1 || quantidade > 50) return null;
  try {
    return preco > 0 ? multiplyCents(toCents(preco), quantidade) : null;
  } catch {
    return null;
  }
}

export function PedidoForm({ apiUrl, onCriado }: { apiUrl: string; onCriado?: () => void }) {
  const id = useId();
  const [valores, setValores] = useState<Valores>(VAZIO);
  const [tocados, setTocados] = useState<Partial<Record<Campo, boolean>>>({});
  const [errosDoServidor, setErrosDoServidor] = useState<Record<string, string>>({});
  const [resultado, setResultado] = useState<ResultadoCriacao | null>(null);
  const [enviando, setEnviando] = useState(false);
  /** The Idempotency-Key of the last attempt, and the body it was sent with. */
  const [tentativa, setTentativa] = useState<{ chave: string; corpo: string } | null>(null);

  const local = validar(valores);
  const total = totalEmCentavos(valores);
  const erroDe = (campo: Campo) =>
    errosDoServidor[campo] ?? (tocados[campo] ? local.erros[campo] : undefined);

  function mudar(campo: Campo, valor: string) {
    setValores((v) => ({ ...v, [campo]: valor }));
    setErrosDoServidor((e) => {
      const { [campo]: _, ...resto } = e;
      return resto;
    });
  }

  async function enviar(event: FormEvent) {
    event.preventDefault();
    setTocados({ cliente: true, item: true, quantidade: true, precoUnitario: true });
    if (!local.ok) return;
    setEnviando(true);
    // A retry of the same order (same fields after an error) reuses its key: the server
    // then answers it as the first attempt and creates nothing. Other fields, a new order.
    const corpo = JSON.stringify(local.corpo);
    const chave = tentativa?.corpo === corpo ? tentativa.chave : crypto.randomUUID();
    setTentativa({ chave, corpo });
    const r = await criarPedido(apiUrl, local.corpo, chave);
    setEnviando(false);
    setResultado(r);
    if (r.tipo === "invalido") setErrosDoServidor(r.erro.campos ?? {});
    if (r.tipo === "criado") {
      setTentativa(null);
      setValores(VAZIO);
      setTocados({});
      onCriado?.();
    }
  }

  return (
    <form className="card" onSubmit={enviar} noValidate aria-labelledby={`${id}-titulo`}>
      <h2 id={`${id}-titulo`}>Novo pedido</h2>
      {(Object.keys(ROTULOS) as Campo[]).map((campo) => {
        const erro = erroDe(campo);
        const inputId = `${id}-${campo}`;
        return (
          <div className="campo" key={campo}>
            <label htmlFor={inputId}>{ROTULOS[campo]}</label>
            <input
              id={inputId}
              name={campo}
              inputMode={
                campo === "quantidade" ? "numeric" : campo === "precoUnitario" ? "decimal" : "text"
              }
              value={valores[campo]}
              onChange={(e) => mudar(campo, e.target.value)}
              onBlur={() => setTocados((t) => ({ ...t, [campo]: true }))}
              aria-invalid={erro ? true : undefined}
              aria-describedby={erro ? `${inputId}-erro` : undefined}
            />
            {erro && (
              <p className="erro-campo" id={`${inputId}-erro`}>
                {erro}
              </p>
            )}
          </div>
        );
      })}
      <p className="total" aria-live="polite">
        Total: <strong data-testid="total">{total === null ? "—" : formatarCentavos(total)}</strong>
        {total !== null && <span className="sr-only"> ({formatCents(total)})</span>}
      </p>
      <button type="submit" disabled={enviando}>
        {enviando ? "Enviando…" : "Fazer pedido"}
      </button>
      <div aria-live="assertive" className="mensagens">
        {resultado?.tipo === "criado" && (
          <p className="ok" role="status">
            Pedido #{resultado.pedido.id} criado: aguardando pagamento.
          </p>
        )}
        {resultado?.tipo === "nao-confirmado" && (
          <p className="alerta" role="alert">
            The order was saved, but its event was not confirmed by Kafka: nothing will charge it
            until the broker is back and the event is published. ({resultado.erro.erro})
          </p>
        )}
        {resultado?.tipo === "invalido" && (
          <p className="alerta" role="alert">
            The server refused the order: {resultado.erro.erro}.
          </p>
        )}
        {resultado?.tipo === "falhou" && (
          <p className="alerta" role="alert">
            {resultado.mensagem}
          </p>
        )}
      </div>
    </form>
  );
}
