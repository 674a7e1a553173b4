/**
 * `check`, or `timedOut` once `timeoutMs` passed first (a handshake check's refusal, an alarm's
 * verdict): a slow check must not hold up what waits on it.
 */
export function withinTime<T, U>(check: Promise<T>, timeoutMs: number, timedOut: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), timeoutMs);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}
