import {
  formatCents,
  multiplyCents,
  NovoPedidoSchema,
  toCents,
  validationError,
} from "@shop/contracts";
import { type FormEvent, useId, useState } from "react";
import { type CreateResult, createPedido } from "../api.ts";
import { formatMoney } from "../format.ts";
import { FORM_FIELDS, type FormField } from "../pedidoFields.tsx";

/** The form's fields are the contract's body's, as web/src/pedidoFields.tsx words them. */
type Field = keyof typeof FORM_FIELDS;
type FormValues = Record<Field, string>;
const FIELDS = Object.entries(FORM_FIELDS) as [Field, FormField][];
const EMPTY = Object.fromEntries(FIELDS.map(([f, d]) => [f, d.initial ?? ""])) as FormValues;
const ALL_TOUCHED = Object.fromEntries(FIELDS.map(([f]) => [f, true])) as Record<Field, boolean>;

/** The same contract the server validates with: one source of the input rules. */
export function validateForm(v: FormValues) {
  const body = Object.fromEntries(
    FIELDS.map(([f, d]) => [f, d.value(v[f])]).filter(([, value]) => value !== undefined),
  );
  const r = NovoPedidoSchema.safeParse(body);
  return r.success
    ? { ok: true as const, body: r.data, errors: {} as Record<string, string> }
    : { ok: false as const, body: body, errors: validationError(r.error.issues).campos ?? {} };
}

/** quantidade × precoUnitario in cents, or null while either is not valid yet. */
export function totalInCents(v: FormValues): number | null {
  const quantidade = FORM_FIELDS.quantidade.value(v.quantidade) as number;
  const price = FORM_FIELDS.precoUnitario.value(v.precoUnitario) as number;
  if (!Number.isInteger(quantidade) || quantidade < 1 || quantidade > 50) return null;
  try {
    return price > 0 ? multiplyCents(toCents(price), quantidade) : null;
  } catch {
    return null;
  }
}

/** One field, its label, and the rule it breaks once touched (or as the server said). */
function FieldInput(props: {
  inputId: string;
  field: Field;
  label: string;
  inputMode: "text" | "numeric" | "decimal";
  value: string;
  error: string | undefined;
  onChange: (value: string) => void;
  onBlur: () => void;
}) {
  const { inputId, field, error } = props;
  return (
    <div className="campo">
      <label htmlFor={inputId}>{props.label}</label>
      <input
        id={inputId}
        name={field}
        inputMode={props.inputMode}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        onBlur={props.onBlur}
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
}

/** What became of the last attempt: created, saved but not confirmed by Kafka, refused, failed. */
function CreateMessages({ createResult }: { createResult: CreateResult | null }) {
  return (
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
  );
}

/**
 * The form's state and its submit: local validation first, then POST /pedidos with an
 * Idempotency-Key that a retry of the same fields reuses.
 */
function useOrderForm(apiUrl: string, onCreated?: () => void) {
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
      ? FORM_FIELDS[field].rule
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
    setTouched(ALL_TOUCHED);
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

  return { values, setTouched, errorOf, change, submit, total, sending, createResult };
}

export function PedidoForm({ apiUrl, onCreated }: { apiUrl: string; onCreated?: () => void }) {
  const id = useId();
  const { values, setTouched, errorOf, change, submit, total, sending, createResult } =
    useOrderForm(apiUrl, onCreated);
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby={`${id}-titulo`}>
      <h2 id={`${id}-titulo`}>Novo pedido</h2>
      <div className="campos">
        {FIELDS.map(([field, d]) => (
          <FieldInput
            key={field}
            inputId={`${id}-${field}`}
            field={field}
            label={d.label}
            inputMode={d.inputMode ?? "text"}
            value={values[field]}
            error={errorOf(field)}
            onChange={(v) => change(field, v)}
            onBlur={() => setTouched((t) => ({ ...t, [field]: true }))}
          />
        ))}
      </div>
      <p className="total" aria-live="polite">
        Total: <strong data-testid="total">{total === null ? "—" : formatMoney(total)}</strong>
        {total !== null && <span className="sr-only"> ({formatCents(total)})</span>}
      </p>
      <button type="submit" disabled={sending}>
        {sending ? "Enviando…" : "Fazer pedido"}
      </button>
      <CreateMessages createResult={createResult} />
    </form>
  );
}
