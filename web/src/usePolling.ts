import { useCallback, useEffect, useRef, useState } from "react";

export interface Polled<T> {
  data: T | null;
  /** The last error; data keeps the last good value meanwhile. */
  error: string | null;
  updatedAt: Date | null;
  /** Loads now, without waiting for the next tick (after the user changed something). */
  refresh: () => void;
}

/** Calls load now and every intervalMs; keeps the last data when a call fails. */
export function usePolling<T>(load: () => Promise<T>, intervalMs: number): Polled<T> {
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
      if (active.current) setState({ data, error: null, updatedAt: new Date() });
    } catch (error) {
      if (active.current)
        setState((s) => ({ ...s, error: error instanceof Error ? error.message : String(error) }));
    }
  }, []);
  useEffect(() => {
    active.current = true;
    void tick();
    const timer = setInterval(tick, intervalMs);
    return () => {
      active.current = false;
      clearInterval(timer);
    };
  }, [intervalMs, tick]);
  const refresh = useCallback(() => void tick(), [tick]);
  return { ...state, refresh };
}
