import {
  formatCents,
  multiplyCents,
  type NovoPedido,
  NovoPedidoSchema,
  toCents,
  validationError,
} from "@shop/contracts";
import { type FormEvent, useId, useState } from "react";
import { type CreateResult, createPedido } from "../api.ts";
import { formatMoney } from "../format.ts";

/**
 * The form's fields are the contract's body's (NovoPedido): a field added to
 * NovoPedidoSchema fails typecheck here until it has its label, its rule and its value.
 */
type Field = keyof NovoPedido;
type FormValues = Record<Field, string>;
const EMPTY: FormValues = { cliente: "", item: "", quantidade: "1", precoUnitario: "" };

const LABELS: Record<Field, string> = {
  cliente: "Cliente",
  item: "Item",
  quantidade: "Quantidade (1 a 50)",
  precoUnitario: "Preço unitário (R$)",
};

/**
 * What a person reads beside a field that breaks its rule, in the page's language: the
 * whole rule of the field, whichever part of it was broken (the contract's own messages,
 * here and in the server's 400, are English for developers).
 */
const RULES: Record<Field, string> = {
  cliente: "Informe o cliente: de 1 a 100 caracteres, sem caracteres de controle.",
  item: "Informe o item: de 1 a 100 caracteres, sem caracteres de controle.",
  quantidade: "A quantidade deve ser um número inteiro de 1 a 50.",
  precoUnitario:
    "O preço unitário deve ser maior que zero, com no máximo duas casas decimais, e o total no máximo R$ 1.000.000.000,00.",
};

/** The same contract the server validates with: one source of the input rules. */
export function validateForm(v: FormValues) {
  const body: { [F in Field]-?: unknown } = {
    cliente: v.cliente,
    item: v.item,
    quantidade: v.quantidade.trim() === "" ? Number.NaN : Number(v.quantidade),
    precoUnitario:
      v.precoUnitario.trim() === "" ? Number.NaN : Number(v.precoUnitario.replace(",", ".")),
  };
  const r = NovoPedidoSchema.safeParse(body);
  return r.success
    ? { ok: true as const, body: r.data, errors: {} as Record<string, string> }
    : { ok: false as const, body: body, errors: validationError(r.error.issues).campos ?? {} };
}

/** quantidade × precoUnitario in cents, or null while either is not valid yet. */
export function totalInCents(v: FormValues): number | null {
  const quantidade = Number(v.quantidade);
  const price = Number(v.precoUnitario.replace(",", "."));
  if (!Number.isInteger(quantidade) || quantidade < 1 || quantidade > 50) return null;
  try {
    return price > 0 ? multiplyCents(toCents(price), quantidade) : null;
  } catch {
    return null;
  }
}

export function PedidoForm({ apiUrl, onCreated }: { apiUrl: string; onCreated?: () => void }) {
  const id = useId();
  const [values, setValues] = useState<FormValues>(EMPTY);
  const [touched, setTouched] = useState<Partial<Record<Field, boolean>>>({});
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [createResult, setCreateResult] = useState<CreateResult | null>(null);
  const [sending, setSending] = useState(false);
  /** The Idempotency-Key of the last attempt, and the body it was sent with. */
  const [attempt, setAttempt] = useState<{ key: string; body: string } | null>(null);

  const local = validateForm(values);
  const total = totalInCents(values);
  const errorOf = (field: Field) =>
    serverErrors[field] !== undefined || (touched[field] && local.errors[field] !== undefined)
      ? RULES[field]
      : undefined;

  function change(field: Field, value: string) {
    setValues((v) => ({ ...v, [field]: value }));
    setServerErrors((e) => {
      const { [field]: _, ...rest } = e;
      return rest;
    });
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setTouched({ cliente: true, item: true, quantidade: true, precoUnitario: true });
    if (!local.ok) return;
    setSending(true);
    // A retry of the same order (same fields after an error) reuses its key: the server
    // then answers it as the first attempt and creates nothing. Other fields, a new order.
    const body = JSON.stringify(local.body);
    const key = attempt?.body === body ? attempt.key : crypto.randomUUID();
    setAttempt({ key, body });
    const r = await createPedido(apiUrl, local.body, key);
    setSending(false);
    setCreateResult(r);
    if (r.kind === "invalid") setServerErrors(r.error.campos ?? {});
    if (r.kind === "created") {
      setAttempt(null);
      setValues(EMPTY);
      setTouched({});
      onCreated?.();
    }
  }

  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby={`${id}-titulo`}>
      <h2 id={`${id}-titulo`}>Novo pedido</h2>
      <div className="campos">
        {(Object.keys(LABELS) as Field[]).map((field) => {
          const error = errorOf(field);
          const inputId = `${id}-${field}`;
          return (
            <div className="campo" key={field}>
              <label htmlFor={inputId}>{LABELS[field]}</label>
              <input
                id={inputId}
                name={field}
                inputMode={
                  field === "quantidade"
                    ? "numeric"
                    : field === "precoUnitario"
                      ? "decimal"
                      : "text"
                }
                value={values[field]}
                onChange={(e) => change(field, e.target.value)}
                onBlur={() => setTouched((t) => ({ ...t, [field]: true }))}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? `${inputId}-erro` : undefined}
              />
              {error && (
                <p className="erro-campo" id={`${inputId}-erro`}>
                  {error}
                </p>
              )}
            </div>
          );
        })}
      </div>
      <p className="total" aria-live="polite">
        Total: <strong data-testid="total">{total === null ? "—" : formatMoney(total)}</strong>
        {total !== null && <span className="sr-only"> ({formatCents(total)})</span>}
      </p>
      <button type="submit" disabled={sending}>
        {sending ? "Enviando…" : "Fazer pedido"}
      </button>
      <div aria-live="assertive" className="mensagens">
        {createResult?.kind === "created" && (
          <p className="ok" role="status">
            Pedido #{createResult.pedido.id} criado: aguardando pagamento.
          </p>
        )}
        {createResult?.kind === "not-confirmed" && (
          <p className="alerta" role="alert">
            O pedido foi salvo, mas o Kafka não confirmou o seu evento: ele só será cobrado quando o
            broker voltar e o evento for publicado. ({createResult.error.mensagem})
          </p>
        )}
        {createResult?.kind === "invalid" && (
          <p className="alerta" role="alert">
            A API recusou o pedido: {createResult.error.mensagem}
          </p>
        )}
        {createResult?.kind === "failed" && (
          <p className="alerta" role="alert">
            {createResult.message}
          </p>
        )}
      </div>
    </form>
  );
}
