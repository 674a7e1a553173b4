const number = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : number.format(value);
}

export function formatTime(at: number | string | null): string {
  if (at === null) return '–';
  return new Date(at).toLocaleTimeString('en-GB', { hour12: false });
}

/** A share of one core as a percentage ("12 %"), or a dash when unknown. */
export function formatCpu(share: number | null | undefined): string {
  return share === null || share === undefined ? '–' : `${Math.round(share * 100)} %`;
}

/** Bytes as mebibytes ("143 MiB"), or a dash when unknown. */
export function formatMiB(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '–' : `${Math.round(bytes / (1024 * 1024))} MiB`;
}

/** Milliseconds with one decimal ("2.4 ms"), or a dash when unknown. */
export function formatMs(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '–' : `${ms.toFixed(1)} ms`;
}

/** An ISO time as the viewer's clock to the millisecond ("14:03:07.042"), or a dash when unknown. */
export function formatClock(at: string | null): string {
  if (at === null) return '–';
  const time = new Date(at);
  return `${formatTime(at)}.${String(time.getMilliseconds()).padStart(3, '0')}`;
}

/** A span of milliseconds as a short age ("under 1 s", "12 s", "3 min", "2 h"), or a dash when unknown. */
export function formatAgo(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return 'under 1 s';
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h`;
}
