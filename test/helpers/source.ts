/**
 * Whether TypeScript `source` defines `name`: a function, a method, a class, or a const
 * bound to one (or to a schema). Docs that name code (docs/rules.md, the code tours, the
 * page's timeline) are held to it by the tests that use this.
 */
export const defines = (source: string, name: string): boolean =>
  new RegExp(
    `(function\\*?\\s+${name}\\b|class\\s+${name}\\b|^\\s*(async\\s+)?${name}\\s*(<[^>]*>)?\\(|(const|let)\\s+${name}\\s*[=:])`,
    "m",
  ).test(source);
