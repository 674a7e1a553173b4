import { type Principal } from '#broker/handshake';

// setTimeout's longest delay; a later expiry is re-armed from there.
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Calls `expired` when the principal's credential expires (its `exp` claim, seconds since the epoch,
 * which JWTs and expiring stored tokens both carry), so a connection never outlives its credential.
 * Returns the function that cancels it; a principal without `exp` schedules nothing.
 */
export function onCredentialExpiry(principal: Principal | null, expired: () => void): () => void {
  const exp = principal?.claims['exp'];
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return () => undefined;
  let timer: NodeJS.Timeout | null = null;
  const arm = (): void => {
    const left = exp * 1000 - Date.now();
    if (left <= 0) return expired();
    timer = setTimeout(arm, Math.min(left, MAX_DELAY_MS));
    timer.unref();
  };
  arm();
  return () => {
    if (timer !== null) clearTimeout(timer);
  };
}
