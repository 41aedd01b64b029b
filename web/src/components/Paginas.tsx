import { useState } from "react";

/**
 * One page of a list at a time: the page's rows, and the pager under the list (shown only
 * when there is more than one page). The page stays in range as the list shrinks.
 */
export function usePaginas<T>(itens: T[] | null, porPagina: number) {
  const [pagina, setPagina] = useState(0);
  const total = itens?.length ?? 0;
  const paginas = Math.max(1, Math.ceil(total / porPagina));
  const atual = Math.min(pagina, paginas - 1);
  return {
    visiveis: itens?.slice(atual * porPagina, (atual + 1) * porPagina) ?? [],
    pager: <Paginas atual={atual} paginas={paginas} irPara={setPagina} />,
  };
}

function Paginas({
  atual,
  paginas,
  irPara,
}: {
  atual: number;
  paginas: number;
  irPara: (pagina: number) => void;
}) {
  if (paginas <= 1) return null;
  return (
    <nav className="paginas" aria-label="Páginas de pedidos">
      <button type="button" onClick={() => irPara(0)} disabled={atual === 0}>
        Mais recentes
      </button>
      <button
        type="button"
        onClick={() => irPara(atual - 1)}
        disabled={atual === 0}
        aria-label="Página anterior"
      >
        ‹
      </button>
      <span aria-live="polite">
        Página {atual + 1} de {paginas}
      </span>
      <button
        type="button"
        onClick={() => irPara(atual + 1)}
        disabled={atual >= paginas - 1}
        aria-label="Próxima página"
      >
        ›
      </button>
    </nav>
  );
}
