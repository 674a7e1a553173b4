import { useCallback, useEffect, useState } from 'preact/hooks';

/**
 * An admin API listing and the last error's words: `load` runs on mount and whenever it changes;
 * `act` makes a change through the admin API, then loads the listing again.
 */
export function useAdminList<T>(load: () => Promise<T[]>): {
  rows: T[];
  error: string | null;
  act: (change: () => Promise<unknown>) => Promise<void>;
} {
  const [rows, setRows] = useState<T[]>([]);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setRows(await load());
      setError(null);
    } catch (err) {
      setError((err as Error).message);
    }
  }, [load]);
  useEffect(() => void reload(), [reload]);
  const act = async (change: () => Promise<unknown>): Promise<void> => {
    try {
      await change();
      await reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return { rows, error, act };
}
