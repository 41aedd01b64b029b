import type { ReactNode } from "react";

/**
 * A table that may be wider than its column: it scrolls sideways, and a keyboard reaches
 * it (Tab, then the arrow keys), named for a screen reader.
 */
export function ScrollArea({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus, or a keyboard cannot scroll it (WCAG 2.1.1)
    <section className="rolagem" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}
