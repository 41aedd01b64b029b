import { z } from "zod";

/**
 * The page's lab (docs/lab-page.md): what its control API, under `npm start` only, answers
 * the page. GET /laboratorio answers LabState; POST /laboratorio/acoes/{acao} answers 202
 * with the story it began, or a refusal: `{erro, mensagem}` with its status.
 */

/** One field of an action's form on the page: a choice, or a whole number in a range. */
export const LabFieldSchema = z.object({
  nome: z.string(),
  rotulo: z.string(),
  tipo: z.enum(["escolha", "numero"]),
  opcoes: z.array(z.string()).optional(),
  min: z.number().int().optional(),
  max: z.number().int().optional(),
  padrao: z.union([z.string(), z.number()]),
});
export type LabField = z.output<typeof LabFieldSchema>;

/**
 * An action's story: before, what it does and what to watch; its lines as it runs; after,
 * what happened, with its figures by name (counted from the brokers and the databases).
 */
export const RelatoSchema = z.object({
  id: z.number().int(),
  acao: z.string(),
  titulo: z.string(),
  inicio: z.string(),
  fim: z.string().nullable(),
  antes: z.array(z.string()),
  linhas: z.array(z.string()),
  depois: z.array(z.string()),
  numeros: z.record(z.string(), z.number()),
  resultado: z.enum(["ok", "falhou"]).nullable(),
});
export type Relato = z.output<typeof RelatoSchema>;

export const LabStateSchema = z.object({
  edicao: z.enum(["eventos", "broker"]),
  acoes: z.array(
    z.object({
      acao: z.string(),
      rotulo: z.string(),
      resumo: z.string(),
      campos: z.array(LabFieldSchema),
      /** Why the page greys it out now, or null. */
      indisponivel: z.string().nullable(),
    }),
  ),
  emAndamento: RelatoSchema.nullable(),
  /** Newest first, at most 30. */
  historico: z.array(RelatoSchema),
  processos: z.array(z.object({ nome: z.string(), estado: z.string() })),
});
export type LabState = z.output<typeof LabStateSchema>;
