import { useCallback, useEffect, useRef, useState } from "react";

export interface Polled<T> {
  data: T | null;
  /** The last error; data keeps the last good value meanwhile. */
  error: string | null;
  updatedAt: Date | null;
  /** Loads now, without waiting for the next tick (after the user changed something). */
  refresh: () => void;
}

/**
 * Calls load now and every intervalMs; keeps the last data when a call fails. While the
 * tab is hidden it does not poll (nobody is looking, and the services are spared); shown
 * again, it loads at once and goes on. With `marca`, the moment each answer arrives is
 * marked (`<marca>:dados`) for the page's render-time measure.
 */
export function usePolling<T>(
  load: () => Promise<T>,
  intervalMs: number,
  markName?: string,
): Polled<T> {
  const [state, setState] = useState<Omit<Polled<T>, "refresh">>({
    data: null,
    error: null,
    updatedAt: null,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const active = useRef(true);
  const tick = useCallback(async () => {
    try {
      const data = await loadRef.current();
      if (markName) performance.mark(`${markName}:dados`);
      if (active.current) setState({ data, error: null, updatedAt: new Date() });
    } catch (error) {
      if (active.current)
        setState((s) => ({ ...s, error: error instanceof Error ? error.message : String(error) }));
    }
  }, [markName]);
  useEffect(() => {
    active.current = true;
    let timer: ReturnType<typeof setInterval> | null = null;
    const start = () => {
      if (timer !== null) return;
      void tick();
      timer = setInterval(tick, intervalMs);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onVisibility = () => (document.visibilityState === "hidden" ? stop() : start());
    if (document.visibilityState !== "hidden") start();
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      active.current = false;
      stop();
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [intervalMs, tick]);
  const refresh = useCallback(() => void tick(), [tick]);
  return { ...state, refresh };
}
