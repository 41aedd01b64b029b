/** One dead letter, whichever edition it comes from. */
export interface CartaMorta {
  /** kafka:<dlq topic>:<partition>:<offset> or rabbitmq:<queue>:<position> */
  id: string;
  edicao: "kafka" | "rabbitmq";
  onde: string;
  origem: string;
  motivo: string;
  tentativas: number;
  estado: "pendente" | "reenviada";
  chave: string | null;
  cabecalhos: Record<string, string>;
  corpo: string;
}

export function linha(c: CartaMorta): string {
  const corpo = c.corpo.length > 60 ? `${c.corpo.slice(0, 57)}...` : c.corpo;
  return `${c.id}  [${c.estado}]  from ${c.origem}  attempts=${c.tentativas}  reason=${c.motivo}  body=${JSON.stringify(corpo)}`;
}
