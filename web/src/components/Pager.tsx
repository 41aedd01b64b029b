import { useState } from "react";

/**
 * One page of a list at a time: the page's rows, and the pager under the list (shown only
 * when there is more than one page). The page stays in range as the list shrinks.
 */
export function usePager<T>(items: T[] | null, pageSize: number) {
  const [page, setPage] = useState(0);
  const total = items?.length ?? 0;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const current = Math.min(page, pages - 1);
  return {
    visible: items?.slice(current * pageSize, (current + 1) * pageSize) ?? [],
    pager: <Pager current={current} pages={pages} goTo={setPage} />,
  };
}

function Pager({
  current,
  pages,
  goTo,
}: {
  current: number;
  pages: number;
  goTo: (page: number) => void;
}) {
  if (pages <= 1) return null;
  return (
    <nav className="pages" aria-label="Páginas de pedidos">
      <button type="button" onClick={() => goTo(0)} disabled={current === 0}>
        Mais recentes
      </button>
      <button
        type="button"
        onClick={() => goTo(current - 1)}
        disabled={current === 0}
        aria-label="Página anterior"
      >
        ‹
      </button>
      <span aria-live="polite">
        Página {current + 1} de {pages}
      </span>
      <button
        type="button"
        onClick={() => goTo(current + 1)}
        disabled={current >= pages - 1}
        aria-label="Próxima página"
      >
        ›
      </button>
    </nav>
  );
}
