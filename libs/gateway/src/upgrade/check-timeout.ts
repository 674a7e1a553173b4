import { type ModuleRefusal } from '#broker/handshake';

/** A handshake check (a module's, the application's guards) within `timeoutMs`, else the `timedOut` refusal. */
export function withinTime<T>(
  check: Promise<T>,
  timeoutMs: number,
  timedOut: ModuleRefusal,
): Promise<T | ModuleRefusal> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ModuleRefusal>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), timeoutMs);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}
