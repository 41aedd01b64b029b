import type { z } from "zod";

/**
 * The JSON body of every 4xx/5xx answer: `erro` for developers (English, precise),
 * `mensagem` a Portuguese sentence for a person (what the course's client shows), and for
 * 400 the failing fields.
 */
export interface HttpError {
  erro: string;
  mensagem: string;
  campos?: Record<string, string>;
}

/** What a person reads for each status when nothing more precise was said. */
const MENSAGEM_POR_STATUS: Record<number, string> = {
  400: "A requisição é inválida: confira os campos indicados.",
  404: "Não encontrado.",
  409: "A requisição conflita com o estado atual do recurso.",
  413: "O corpo da requisição é grande demais.",
  415: "O corpo deve ser JSON em UTF-8.",
  422: "Esta chave já foi usada com outro conteúdo.",
  500: "Erro interno: a operação não foi concluída.",
  503: "Serviço indisponível no momento: tente de novo em instantes.",
};

/** The person's sentence for a status: the one for its class when the status has none. */
export function mensagemFor(status: number): string {
  return (
    MENSAGEM_POR_STATUS[status] ??
    (status >= 500 ? (MENSAGEM_POR_STATUS[500] as string) : "A requisição não pôde ser atendida.")
  );
}

export function validationError(issues: readonly z.core.$ZodIssue[]): HttpError {
  const campos: Record<string, string> = {};
  for (const issue of issues) {
    const field = issue.path.length > 0 ? issue.path.join(".") : "(body)";
    campos[field] ??= issue.message;
  }
  return { erro: "invalid input", mensagem: mensagemFor(400), campos };
}
