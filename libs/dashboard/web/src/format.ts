const number = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : number.format(value);
}

export function formatTime(at: number | string | null): string {
  if (at === null) return '–';
  return new Date(at).toLocaleTimeString('en-GB', { hour12: false });
}
