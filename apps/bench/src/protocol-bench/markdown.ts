/** A markdown table; `align` per column: 'l' or 'r'. */
export function markdownTable(
  headers: readonly string[],
  align: string,
  rows: readonly (readonly string[])[],
): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const rule = [...align].map((a) => (a === 'l' ? ':---' : '---:'));
  return [line(headers), line(rule), ...rows.map(line)].join('\n');
}

export function fixed(value: number | null, digits: number): string {
  return value === null || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);
}

export function percent(share: number | null): string {
  return share === null ? 'n/a' : `${Math.round(share * 100)} %`;
}

/** numerator / denominator as "1.23×", n/a when either is missing. */
export function times(numerator: number | null, denominator: number | null): string {
  if (numerator === null || denominator === null || !(denominator > 0) || Number.isNaN(numerator))
    return 'n/a';
  return `${(numerator / denominator).toFixed(2)}×`;
}

export function errorTotal(errors: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of errors.values()) total += count;
  return total;
}

export function addError(errors: Map<string, number>, label: string, count = 1): void {
  errors.set(label, (errors.get(label) ?? 0) + count);
}
