import type { DeadLetter as PanelDeadLetter } from "@shop/contracts";
import { escapeControls } from "@shop/service";

/**
 * One dead letter, whichever edition it comes from: what the platform panel shows of it
 * (the contract's DeadLetter) and what the CLI needs to redrive it.
 */
export interface DeadLetter extends Omit<PanelDeadLetter, "em"> {
  /** kafka:<dlq topic>:<partition>:<offset> or rabbitmq:<queue>:<position> */
  id: string;
  edicao: "kafka" | "rabbitmq";
  tentativas: number;
  estado: "pendente" | "reenviada";
  cabecalhos: Record<string, string>;
}

/**
 * One line per dead letter. Everything but the CLI's own words came from a producer or a
 * broker, so control characters are escaped before a terminal sees them.
 */
export function line(c: DeadLetter): string {
  const corpo = c.corpo.length > 60 ? `${c.corpo.slice(0, 57)}...` : c.corpo;
  return escapeControls(
    `${c.id}  [${c.estado}]  from ${c.origem}  attempts=${c.tentativas}  reason=${c.motivo}  body=${JSON.stringify(corpo)}`,
  );
}

/** A dead letter, or several, as JSON text safe for a terminal (and still valid JSON). */
export function json(valor: unknown): string {
  // JSON.stringify escapes a newline inside a string, so each \n left is layout.
  return JSON.stringify(valor, null, 2).split("\n").map(escapeControls).join("\n");
}
