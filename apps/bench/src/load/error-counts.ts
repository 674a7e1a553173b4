/** Failures by label: each one is printed in the report and makes the exit code 1. */
export class ErrorCounts {
  readonly byLabel = new Map<string, number>();

  add(label: string, count = 1): void {
    this.byLabel.set(label, (this.byLabel.get(label) ?? 0) + count);
  }

  get total(): number {
    let total = 0;
    for (const count of this.byLabel.values()) total += count;
    return total;
  }
}
