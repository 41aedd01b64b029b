import { type NovoPedido, type Pedido, toCents } from "@shop/contracts";
import type { ReactNode } from "react";
import { formatMoney, formatTime } from "./format.ts";

/**
 * The page's words for each field of an order, in one place: the form's fields are the
 * contract's body's (NovoPedido), the list's columns its order's (Pedido). A field added
 * to the contract fails typecheck here until it has its label (and, in the form, its rule
 * and how the typed text becomes its value); nothing else of the page changes for it.
 */
export interface FormField {
  label: string;
  /**
   * What a person reads beside a field that breaks its rule, in the page's language: the
   * whole rule of the field, whichever part of it was broken (the contract's own messages,
   * here and in the server's 400, are English for developers).
   */
  rule: string;
  /** The typed text as the body's value (undefined: an optional field left out). */
  value: (text: string) => unknown;
  /** What the field holds when the form opens (empty if not given). */
  initial?: string;
  inputMode?: "numeric" | "decimal";
}

/** A number typed with a comma or a point; blank is not a number. */
const typedNumber = (text: string) =>
  text.trim() === "" ? Number.NaN : Number(text.replace(",", "."));

/** The form's fields, in the order shown. */
export const FORM_FIELDS: { [F in keyof NovoPedido]-?: FormField } = {
  cliente: {
    label: "Cliente",
    rule: "Informe o cliente: de 1 a 100 caracteres, sem caracteres de controle.",
    value: (text) => text,
  },
  item: {
    label: "Item",
    rule: "Informe o item: de 1 a 100 caracteres, sem caracteres de controle.",
    value: (text) => text,
  },
  quantidade: {
    label: "Quantidade (1 a 50)",
    rule: "A quantidade deve ser um número inteiro de 1 a 50.",
    value: (text) => (text.trim() === "" ? Number.NaN : Number(text)),
    initial: "1",
    inputMode: "numeric",
  },
  precoUnitario: {
    label: "Preço unitário (R$)",
    rule: "O preço unitário deve ser maior que zero, com no máximo duas casas decimais, e o total no máximo R$ 1.000.000.000,00.",
    value: typedNumber,
    inputMode: "decimal",
  },
};

export const STATUS_LABELS: Record<Pedido["status"], string> = {
  AGUARDANDO_PAGAMENTO: "Aguardando pagamento",
  PAGO: "Pago",
  RECUSADO: "Recusado",
};

export interface Column {
  label: string;
  cell: (p: Pedido) => ReactNode;
  num?: true;
}

/**
 * The list's columns, in the order shown (the order's number, with the button to its
 * timeline, is the row's first cell). What a person comes to see first leads, so that a
 * narrow screen shows it without scrolling sideways: the status and why (issue 34).
 */
export const COLUMNS: { [F in Exclude<keyof Pedido, "id">]-?: Column } = {
  status: {
    label: "Status",
    cell: (p) => (
      <span className={`badge badge-${p.status.toLowerCase()}`} data-status={p.status}>
        {STATUS_LABELS[p.status]}
      </span>
    ),
  },
  motivo: { label: "Motivo", cell: (p) => p.motivo ?? "—" },
  valor: { label: "Valor", cell: (p) => formatMoney(toCents(p.valor)), num: true },
  cliente: { label: "Cliente", cell: (p) => p.cliente },
  item: { label: "Item", cell: (p) => p.item },
  quantidade: { label: "Qtd.", cell: (p) => p.quantidade, num: true },
  processadoPor: { label: "Decidido por", cell: (p) => p.processadoPor ?? "—" },
  criadoEm: {
    label: "Criado em",
    cell: (p) => <time dateTime={p.criadoEm}>{formatTime(p.criadoEm)}</time>,
  },
};
