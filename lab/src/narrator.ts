/**
 * What an experiment says to the person running it: what it does, what to watch and what
 * just happened, in plain words and in pt-BR (the page's language: the page's lab shows
 * these lines too, issue 56), then PASS or FAIL lines it checked from the shop's state.
 * PASS and FAIL start their lines, so that a script (the test suite) can read them.
 */
export class Narrator {
  private readonly results: { ok: boolean; text: string }[] = [];
  private readonly coloured: boolean;

  constructor(private readonly write: (line: string) => void = (l) => console.log(l)) {
    this.coloured = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  }

  private paint(code: number, text: string): string {
    return this.coloured ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  title(name: string, summary: string): void {
    this.write(this.paint(1, `\n== ${name}: ${summary} ==`));
  }

  /** A paragraph: what the experiment is about, before it starts. */
  explain(text: string): void {
    this.write(text);
  }

  /** What the experiment does now. */
  doing(text: string): void {
    this.write(this.paint(36, `\n-> ${text}`));
  }

  /** Where to look while it happens: the web page, a panel, a log. */
  watch(text: string): void {
    this.write(this.paint(33, `   observe: ${text}`));
  }

  /** What just happened, as read from the shop. */
  saw(text: string): void {
    this.write(`   ${text}`);
  }

  /** A check against the shop's real state: a PASS or a FAIL line. */
  check(ok: boolean, text: string): boolean {
    this.results.push({ ok, text });
    this.write(ok ? this.paint(32, `PASS ${text}`) : this.paint(31, `FAIL ${text}`));
    return ok;
  }

  /** The last line, and the exit status: 0 when every check passed (and there was one). */
  finish(name: string, seconds: number): number {
    const failed = this.results.filter((r) => !r.ok).length;
    const passed = this.results.length - failed;
    const ok = failed === 0 && passed > 0;
    const text = `${name}: ${passed} PASS, ${failed} FAIL em ${seconds.toFixed(0)} s`;
    this.write(this.paint(ok ? 32 : 31, `\n${text}`));
    return ok ? 0 : 1;
  }
}
