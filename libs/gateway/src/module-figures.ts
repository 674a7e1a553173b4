/** A module's live counts (sessions, subscriptions, charge points...), by name. */
export type Figures = Readonly<Record<string, number>>;

/**
 * Where protocol modules report their live state for the dashboard: each gives a function that
 * counts, read on the dashboard feed's tick only, so nothing is counted while nobody watches.
 */
export class ModuleFigures {
  private readonly sources = new Map<string, () => Figures>();

  report(module: string, read: () => Figures): void {
    this.sources.set(module, read);
  }

  read(): Record<string, Figures> {
    const figures: Record<string, Figures> = {};
    for (const [module, read] of this.sources) figures[module] = read();
    return figures;
  }
}
