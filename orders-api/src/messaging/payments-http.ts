import { DecisaoSincronaSchema, fromCents } from "@shop/contracts";
import { AnnouncementFailed, type PedidoAnnouncer } from "../pedidos.ts";

/**
 * The earlier, synchronous configuration: call payments by HTTP and wait for its decision.
 * As the spec says, it has no error handling: no retry and no recovery. A failure leaves
 * the order AGUARDANDO_PAGAMENTO for good.
 */
export function paymentsHttpAnnouncer(pagamentosUrl: string): PedidoAnnouncer {
  return {
    stage: () => null,
    async announce(pedido) {
      const response = await fetch(`${pagamentosUrl}/pagamentos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pedidoId: pedido.id, valor: fromCents(pedido.valorCentavos) }),
        signal: AbortSignal.timeout(30_000),
      }).catch((error: unknown) => {
        throw new AnnouncementFailed("payments did not answer", {
          cause: error,
          code: "pagamentos-indisponivel",
        });
      });
      if (!response.ok) {
        throw new AnnouncementFailed(`payments answered ${response.status}`, {
          code: "pagamentos-falhou",
        });
      }
      return {
        resultado: DecisaoSincronaSchema.parse(await response.json()),
        source: { via: "http (synchronous configuration)" },
      };
    },
  };
}
