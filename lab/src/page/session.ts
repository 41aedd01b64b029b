import type { LabField, LabState, Relato } from "@shop/contracts";
import type { z } from "zod";

/** A refusal: its HTTP status, a code for programs, a sentence for people. */
export interface Refusal {
  status: number;
  erro: string;
  mensagem: string;
}

/**
 * The page's lab: its actions, the one running (one at a time) and the history of what the
 * learner did, each action told as the lab's experiments tell theirs: before, what it does
 * and what to watch; after, what happened, counted from the shop's real state.
 */

/** What an action tells, as it happens. The page shows it as it comes (it polls). */
export interface Story {
  /** Before: what it does and what to watch on the panel. */
  before(text: string): void;
  /** While it runs: one step, or a line of an experiment's output. */
  line(text: string): void;
  /** After: what happened, with the figures counted from the state. */
  after(text: string): void;
  /** A counted figure, by name (the tests assert these against the databases and topics). */
  figure(name: string, value: number): void;
  /** The action did not do what it should have: said, and the story ends as failed. */
  fail(text: string): void;
}

export interface LabAction<P = Record<string, unknown>> {
  /** Its name in the route: POST /laboratorio/acoes/{acao}. */
  acao: string;
  /** The button's words. */
  rotulo: string;
  /** One sentence: what it does. */
  resumo: string;
  campos: LabField[];
  params: z.ZodType<P>;
  /** The story's title for these parameters ("Matar caixa-2 (kill -9)"). */
  title(p: P): string;
  /** Why it may not run now with these parameters (a sentence), or null. */
  refusal(p: P): Promise<string | null> | string | null;
  run(p: P, story: Story): Promise<void>;
  /** Why the page should grey it out now, or null (asked at every GET). */
  unavailable?(): string | null;
}

/**
 * An action as the session holds it: the session runs actions of any parameters alike
 * (it parses them with the action's own schema first); each is type-checked where written.
 */
export type AnyLabAction = LabAction<never>;
export const anyAction = <P>(action: LabAction<P>) => action as unknown as AnyLabAction;

const HISTORY = 30;
/** At most this many lines of one story (an experiment's output is long). */
const MAX_LINES = 400;

export class LabSession {
  private current: Relato | null = null;
  private readonly history: Relato[] = [];
  private nextId = 1;
  private readonly byName: Map<string, LabAction>;
  /** Resolves when the running action ends (tests and close() wait on it). */
  private running: Promise<void> = Promise.resolve();

  constructor(
    readonly edicao: "eventos" | "broker",
    actions: AnyLabAction[],
    private readonly processes: () => { nome: string; estado: string }[],
    private readonly log: (line: string) => void = () => {},
  ) {
    this.byName = new Map(actions.map((a) => [a.acao, a as unknown as LabAction]));
  }

  state(): LabState {
    return {
      edicao: this.edicao,
      acoes: [...this.byName.values()].map((a) => ({
        acao: a.acao,
        rotulo: a.rotulo,
        resumo: a.resumo,
        campos: a.campos,
        indisponivel: a.unavailable?.() ?? null,
      })),
      emAndamento: this.current,
      historico: this.history,
      processos: this.processes(),
    };
  }

  /**
   * Starts an action, or says why not: unknown, bad parameters, another one running, or
   * the action's own refusal (a process this npm start did not start, say).
   */
  async begin(acao: string, body: unknown): Promise<Relato | Refusal> {
    const action = this.byName.get(acao);
    if (!action)
      return {
        status: 404,
        erro: "acao-desconhecida",
        mensagem: `O laboratório não tem a ação ${JSON.stringify(acao)}; ele tem ${[...this.byName.keys()].join(", ")}.`,
      };
    if (this.current)
      return {
        status: 409,
        erro: "acao-em-andamento",
        mensagem: `Já há uma ação em andamento: «${this.current.titulo}», há ${Math.round((Date.now() - Date.parse(this.current.inicio)) / 1000)} s. Espere ela terminar.`,
      };
    const parsed = action.params.safeParse(body);
    if (!parsed.success)
      return {
        status: 400,
        erro: "parametros-invalidos",
        mensagem: `Parâmetros inválidos para ${acao}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "corpo"}: ${i.message}`).join("; ")}.`,
      };
    const relato: Relato = {
      id: this.nextId++,
      acao,
      titulo: action.title(parsed.data),
      inicio: new Date().toISOString(),
      fim: null,
      antes: [],
      linhas: [],
      depois: [],
      numeros: {},
      resultado: null,
    };
    // Taken before the refusal is asked (which may read a broker): a second click while it
    // is asked is refused as busy.
    this.current = relato;
    let refusal: string | null;
    try {
      refusal = await action.refusal(parsed.data);
    } catch (error) {
      refusal = `Não foi possível verificar: ${(error as Error).message}`;
    }
    if (refusal) {
      this.current = null;
      this.nextId--;
      return { status: 409, erro: "acao-recusada", mensagem: refusal };
    }
    this.running = this.runAction(action, parsed.data, relato);
    return relato;
  }

  /** Waits for the action running now, if any. */
  idle(): Promise<void> {
    return this.running;
  }

  private async runAction(action: LabAction, params: unknown, relato: Relato): Promise<void> {
    const story = storyOf(relato);
    try {
      this.log(`lab: ${relato.titulo}`);
      await action.run(params as never, story);
      relato.resultado ??= "ok";
    } catch (error) {
      story.fail(`A ação parou: ${(error as Error).message}`);
    } finally {
      relato.fim = new Date().toISOString();
      this.history.unshift(relato);
      this.history.length = Math.min(this.history.length, HISTORY);
      this.current = null;
      this.log(`lab: ${relato.titulo}: ${relato.resultado}`);
    }
  }
}

function storyOf(r: Relato): Story {
  const push = (lines: string[], text: string) => {
    if (lines.length < MAX_LINES) lines.push(text);
  };
  return {
    before: (text) => push(r.antes, text),
    line: (text) => push(r.linhas, text),
    after: (text) => push(r.depois, text),
    figure: (name, value) => {
      r.numeros[name] = value;
    },
    fail: (text) => {
      push(r.depois, text);
      r.resultado = "falhou";
    },
  };
}
