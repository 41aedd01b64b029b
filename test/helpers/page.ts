import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { build } from "vite";
import { expect } from "vitest";
import { CHROMIUM } from "../../infra/browser.ts";
import { ROOT } from "../../infra/config.ts";
import { serveFolder } from "./static-site.ts";

/**
 * The web page in a real browser (Debian's chromium, driven by playwright-core), for every
 * test that looks at it: the page tests (web/test/integration) and the cluster files of
 * the fault suite, which look at it with three brokers or nodes. Screenshots go to
 * test-artifacts/ (git-ignored; docs/lab-page.md shows them).
 */
export const ARTIFACTS = join(ROOT, "test-artifacts");
/**
 * The functions given to page.evaluate run in the browser, while this file is compiled in
 * the Node programs too (tsconfig.json has no DOM types, and must not: they would change
 * Node's fetch): it names the little of the DOM those functions use.
 */
interface Box {
  tagName: string;
  className: string;
  getBoundingClientRect(): { top: number; right: number; width: number };
  parentElement: Box | null;
  textContent: string | null;
  closest(selector: string): Box | null;
  contains(other: Box): boolean;
}
declare const document: {
  createElement(tag: "canvas"): {
    getContext(kind: "2d"): { font: string; measureText(text: string): { width: number } } | null;
  };
  createTreeWalker(root: Box, show: number): { nextNode(): Box | null };
  createRange(): {
    selectNodeContents(node: Box): void;
    getClientRects(): ArrayLike<{ top: number }>;
  };
  querySelector(selector: string): Box | null;
  querySelectorAll(selector: string): ArrayLike<Box>;
  documentElement: { scrollWidth: number };
};
declare const window: { innerWidth: number; innerHeight: number; scrollY: number };
declare function getComputedStyle(box: Box): {
  overflowX: string;
  position: string;
  display: string;
  font: string;
  paddingLeft: string;
  paddingRight: string;
};

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function launchBrowser(): Promise<Browser> {
  expect(
    existsSync(CHROMIUM),
    "Debian's chromium is needed: apt-get install chromium (.ci/run does it)",
  ).toBe(true);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/**
 * A folder served on a free port, its origin known before the page is built into it: a
 * service is started with that origin as FRONT_ORIGIN (CORS), then `build` makes the page
 * against the service's address.
 */
export async function pageSite(servers: Server[], name: string) {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const origin = await serveFolder(servers, dir);
  return { origin, build: (apiUrl: string) => buildFor(apiUrl, dir) };
}

/** The web app built as production builds it, against `apiUrl`, into `dir`. */
export async function buildFor(apiUrl: string, dir: string): Promise<void> {
  process.env.VITE_API_URL = apiUrl;
  await build({
    configFile: join(ROOT, "web/vite.config.ts"),
    logLevel: "warn",
    build: { outDir: dir, emptyOutDir: true },
  });
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run: () => Promise<unknown> } }).axe.run(),
  )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** True when the element's top edge is inside the first viewport, with no scrolling. */
export const inFirstViewport = (page: Page, selector: string) =>
  page.evaluate((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r !== undefined && r.top >= 0 && r.top < window.innerHeight && window.scrollY === 0;
  }, selector);

/**
 * Each element matching `selector`: its text, its width, and why it is cut at the right (its
 * right edge past the window or past a box around it that clips what overflows, a table's
 * scroll area), or null when it is in view without scrolling sideways. A stacked table's
 * hidden headings are never cut (each cell names its column).
 */
const cutAt = (page: Page, selector: string) =>
  page.evaluate(
    (s) =>
      Array.from(document.querySelectorAll(s)).map((el) => {
        const text = (el.textContent ?? "").trim().slice(0, 40);
        const width = el.getBoundingClientRect().width;
        const head = el.closest("thead");
        if (head && getComputedStyle(head).position === "absolute")
          return { text, width, why: null };
        const right = el.getBoundingClientRect().right;
        if (right > window.innerWidth + 1)
          return { text, width, why: `${Math.round(right)} > window ${window.innerWidth}` };
        for (let box = el.parentElement; box; box = box.parentElement) {
          const clips = ["auto", "scroll", "hidden"].includes(getComputedStyle(box).overflowX);
          const edge = box.getBoundingClientRect().right;
          if (clips && right > edge + 1)
            return {
              text,
              width,
              why: `${Math.round(right)} > ${Math.round(edge)} of ${box.tagName.toLowerCase()}.${box.className}`,
            };
        }
        return { text, width, why: null as string | null };
      }),
    selector,
  );

/** Whether the first element matching `selector` is there and in view without scrolling sideways. */
export const inViewSideways = async (page: Page, selector: string) => {
  const [first] = await cutAt(page, selector);
  return first !== undefined && first.why === null;
};

/**
 * Whether the page itself scrolls sideways (wider than the window): false, or the
 * innermost elements that reach past the window's right edge, to say what pushes it.
 */
export const overflowsSideways = (page: Page) =>
  page.evaluate(() => {
    if (document.documentElement.scrollWidth <= window.innerWidth) return false;
    const past = Array.from(document.querySelectorAll("body *")).filter(
      (el) => el.getBoundingClientRect().right > window.innerWidth + 1,
    );
    // The innermost: those with nothing past the edge inside them.
    const innermost = past.filter((el) => !past.some((o) => o !== el && el.contains(o)));
    return innermost
      .slice(0, 4)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}.${el.className} "${(el.textContent ?? "").trim().slice(0, 30)}" to ${Math.round(el.getBoundingClientRect().right)}`,
      )
      .join("; ");
  });

/**
 * Table cells and headers with text narrower than 40 px: a column one word wide or a
 * heading wrapped letter by letter (issue 56 saw both at 390 px). Each as its text.
 */
export const narrowCells = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll("td, th"))
      .filter((c) => {
        const r = c.getBoundingClientRect();
        // A stacked table's headings are hidden for sight (each cell names its column).
        const head = c.closest("thead");
        if (head && getComputedStyle(head).position === "absolute") return false;
        if (r.width <= 0 || r.width >= 40) return false;
        // Its text's lines (the distinct tops of its line boxes) against its words: a
        // word a line, or a word over lines, is a column one word wide ("Lag" alone is fine).
        const lines = new Set<number>();
        const texts = document.createTreeWalker(c, 4 /* text nodes only */);
        for (let t = texts.nextNode(); t; t = texts.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(t);
          for (const x of Array.from(range.getClientRects())) lines.add(Math.round(x.top / 4));
        }
        const words = (c.textContent ?? "").trim().split(/\s+/).filter(Boolean).length;
        return lines.size >= 2 && lines.size >= words;
      })
      .map((c) => (c.textContent ?? "").trim().slice(0, 40)),
  );

/**
 * Blocks of text narrower than 100 px that hold four words or more: the lab's descriptions
 * were one or two words wide at 390 px (issue 56). Each as the start of its text.
 */
export const narrowText = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll("p, li, dd, label, small"))
      .filter((el) => {
        const r = el.getBoundingClientRect();
        const words = (el.textContent ?? "").trim().split(/\s+/).length;
        return r.width > 0 && r.width < 100 && words >= 4;
      })
      .map((el) => (el.textContent ?? "").trim().slice(0, 40)),
  );

/**
 * Table cells whose text breaks inside a word because the column is too narrow for it
 * ("pagamento / s", a queue's name letter by letter: issue 56 saw both at 1280 px on a
 * cluster). A word is what lies between spaces and after `.`, `@`, `-` or `/`, where a name
 * may wrap; it is measured in the cell's own font. Stacked tables (a phone's) are left out:
 * there each value has the row's width. Each as the word and its cell's text.
 */
export const brokenWords = (page: Page) =>
  page.evaluate(() => {
    const ruler = document.createElement("canvas").getContext("2d");
    if (!ruler) return ["no canvas to measure with"];
    return Array.from(document.querySelectorAll("td, th")).flatMap((cell) => {
      const style = getComputedStyle(cell);
      const row = cell.closest("tr");
      if (!row || getComputedStyle(row).display === "block") return [];
      const head = cell.closest("thead");
      if (head && getComputedStyle(head).position === "absolute") return [];
      const room =
        cell.getBoundingClientRect().width -
        Number.parseFloat(style.paddingLeft) -
        Number.parseFloat(style.paddingRight);
      if (room <= 0) return [];
      ruler.font = style.font;
      const words = (cell.textContent ?? "").split(/\s+|(?<=[.@\-/])/).filter(Boolean);
      const widest = words.reduce(
        (w, word) => {
          const width = ruler.measureText(word).width;
          return width > w.width ? { word, width } : w;
        },
        { word: "", width: 0 },
      );
      return widest.width > room + 2
        ? [`${widest.word} in "${(cell.textContent ?? "").trim().slice(0, 40)}"`]
        : [];
    });
  });

/**
 * Every table's last column and every box of the picture that is cut at the right (by
 * the window or by a box that clips): issue 56 found the orders table cut after "Qtd." and
 * the queue table after "Tipo" at 1280 px. Each as the start of its text.
 */
export const cutAtTheRight = async (page: Page) =>
  [
    // Each row's last cell, shown (a row's cells end at the right).
    ...(await cutAt(page, "tr > :last-child")).filter((c) => c.width > 0),
    ...(await cutAt(page, '[data-testid="fluxo"] [data-estacao], [data-testid="fluxo"] svg')),
  ].flatMap((c) => (c.why ? [`${c.text} (${c.why})`] : []));

/**
 * What is wrong with the page's layout at its size now: sideways scroll of the page, a
 * column or a text one word wide, anything cut at the right. Empty when nothing is.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  const wide = await overflowsSideways(page);
  if (wide) problems.push(`the page scrolls sideways: ${wide}`);
  for (const c of await narrowCells(page)) problems.push(`a column one word wide: ${c}`);
  for (const t of await narrowText(page)) problems.push(`text a word or two wide: ${t}`);
  for (const w of await brokenWords(page)) problems.push(`a word broken by its column: ${w}`);
  for (const c of await cutAtTheRight(page)) problems.push(`cut at the right: ${c}`);
  return problems;
}

/** The two sizes: a desktop's and a phone's. */
export const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/**
 * The page at each size, held to `layoutProblems` (given a few seconds to lay out again),
 * and kept as `<name>-<width>x<height>.png` in test-artifacts/, whole, whether it passed or
 * not (a failure's picture is the first thing to look at). Ends at the first size.
 */
export async function checkSizes(page: Page, name: string): Promise<void> {
  for (const { width, height } of SIZES) {
    await page.setViewportSize({ width, height });
    await expect
      .poll(() => layoutProblems(page), { timeout: 10_000, message: `${name} at ${width}` })
      .toEqual([])
      .finally(() =>
        page.screenshot({
          path: join(ARTIFACTS, `${name}-${width}x${height}.png`),
          fullPage: true,
        }),
      );
  }
  await page.setViewportSize(SIZES[0]);
}

/**
 * What a page reports as wrong while it loads and runs: console errors, uncaught
 * exceptions, and any answer of 400 or more to one of its requests (a missing favicon
 * logs a 404 in the console too). Listening from before the first request.
 */
export function problemsOf(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`uncaught: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  return problems;
}
