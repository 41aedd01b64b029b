import type { z } from "zod";

/** The JSON body of every 4xx/5xx answer: a message, and for 400 the failing fields. */
export interface HttpError {
  erro: string;
  campos?: Record<string, string>;
}

export function validationError(issues: readonly z.core.$ZodIssue[]): HttpError {
  const campos: Record<string, string> = {};
  for (const issue of issues) {
    const field = issue.path.length > 0 ? issue.path.join(".") : "(body)";
    campos[field] ??= issue.message;
  }
  return { erro: "invalid input", campos };
}
