import { Fragment } from "react";

/**
 * A name without spaces (a queue, a node, a group, a topic: `pagamentos.solicitacoes.erros`,
 * `rabbit-1@host`) that may wrap after each `.`, `@` or `_` as it already may after a `-`,
 * and nowhere inside a word: a narrow column wraps it between its parts instead of letter
 * by letter (issue 56 saw "paga / ment / os.sol" in the queue table at 1280 px).
 */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[.@_])/);
  return (
    <>
      {parts.map((part, i) => (
        // The parts of one name, in order: their index is their identity.
        // biome-ignore lint/suspicious/noArrayIndexKey: a name's parts never reorder
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}
