import { formatCents } from "@shop/contracts";
import { escapeControls } from "@shop/service";
import type { Dashboard } from "./domain/orders-view.ts";

export interface PartitionLag {
  topic: string;
  partition: number;
  endOffset: number;
  committedOffset: number | null;
  lag: number;
}

/**
 * Where the CLI writes. Records and dashboards go to stdout, or to stderr with --json so
 * that stdout holds only the final JSON. Progress is drawn in place on a terminal and
 * printed as plain lines otherwise.
 */
export class AnalyticsOutput {
  private lastProgress = 0;
  private progressShown = false;
  private readonly main: NodeJS.WriteStream;

  constructor(
    private readonly opts: { json: boolean; quiet: boolean },
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {
    this.main = opts.json ? stderr : stdout;
  }

  private get tty(): boolean {
    return Boolean(this.stderr.isTTY);
  }

  private clearProgress() {
    if (this.progressShown) {
      this.stderr.write("\r\x1b[K");
      this.progressShown = false;
    }
  }

  /** Informational lines (start, replay), never suppressed. */
  info(line: string) {
    this.clearProgress();
    this.main.write(`${line}\n`);
  }

  /** --quiet: no per-record lines and no dashboard per batch (nothing to build for them). */
  get quiet(): boolean {
    return this.opts.quiet;
  }

  /** One text block per batch: its record lines, then the dashboard. */
  batch(lines: string[], dashboard: string) {
    if (this.opts.quiet) return;
    this.clearProgress();
    this.main.write(`${lines.join("\n")}\n${dashboard}\n`);
  }

  progress(read: number, total: number, force = false) {
    const now = Date.now();
    if (!force && now - this.lastProgress < (this.tty ? 100 : 2000)) return;
    this.lastProgress = now;
    const pct = total > 0 ? Math.min(100, Math.floor((read / total) * 100)) : 100;
    if (this.tty) {
      const width = 30;
      const filled = Math.round((pct / 100) * width);
      this.stderr.write(
        `\r\x1b[K[${"#".repeat(filled)}${".".repeat(width - filled)}] ${read}/${total} records (${pct}%)`,
      );
      this.progressShown = true;
    } else {
      this.main.write(`progress: ${read}/${total} records (${pct}%)\n`);
    }
  }

  final(summary: Summary) {
    this.clearProgress();
    if (this.opts.json) {
      this.stdout.write(`${JSON.stringify(dashboardJson(summary), null, 2)}\n`);
      return;
    }
    this.stdout.write(
      `${dashboardText(summary.grupo, summary.dashboard, summary.invalid)}\n${lagText(summary)}\n`,
    );
  }
}

export interface Summary {
  grupo: string;
  dashboard: Dashboard;
  read: number;
  invalid: number;
  lag: PartitionLag[];
}

/**
 * The dashboard's lines, one per figure, in the order shown (null: no line). Keyed by the
 * view's Dashboard: a figure added there fails typecheck here until it has its line.
 */
const DASHBOARD_LINES: { [F in keyof Dashboard]-?: (p: Dashboard) => string | null } = {
  pedidosVistos: (p) => `orders seen      ${p.pedidosVistos}`,
  pedidosPagos: (p) => `orders paid      ${p.pedidosPagos}`,
  receitaCentavos: (p) => `revenue          ${formatCents(p.receitaCentavos)}`,
  maisVendido: (p) =>
    `best-selling     ${
      p.maisVendido
        ? `${escapeControls(p.maisVendido.item)} (${p.maisVendido.quantidade} units)`
        : "-"
    }`,
  resultadosSemPedido: (p) =>
    p.resultadosSemPedido > 0
      ? `results waiting  ${p.resultadosSemPedido} (creation event not read yet)`
      : null,
};

export function dashboardText(grupo: string, p: Dashboard, invalidos: number): string {
  return [
    `── dashboard (group ${grupo}) ──`,
    ...Object.values(DASHBOARD_LINES).map((line) => line(p)),
    invalidos > 0 ? `invalid records  ${invalidos}` : null,
  ]
    .filter((line) => line !== null)
    .join("\n");
}

function lagText(r: Summary): string {
  const rows = r.lag.map(
    (l) =>
      `  ${l.topic.padEnd(32)} ${String(l.partition).padStart(3)}  end ${String(l.endOffset).padStart(8)}  committed ${String(l.committedOffset ?? "-").padStart(8)}  lag ${l.lag}`,
  );
  return [
    `lag per partition (end offset − committed offset), ${r.read} records read:`,
    ...rows,
  ].join("\n");
}

/** What --json prints: the dashboard's figures as the view computes them (a new one comes along), and the run's. */
export function dashboardJson(r: Summary) {
  return {
    grupo: r.grupo,
    ...r.dashboard,
    receita: r.dashboard.receitaCentavos / 100,
    registrosLidos: r.read,
    registrosInvalidos: r.invalid,
    lag: r.lag,
  };
}

export type DashboardJson = ReturnType<typeof dashboardJson>;
