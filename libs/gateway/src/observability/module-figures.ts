/** A module's live counts (sessions, subscriptions, charge points...), by key. */
export type Figures = Readonly<Record<string, number>>;

/** What a module shows of itself on the dashboard's card: its title and its counts, labelled. */
export interface FiguresSource {
  /** The card's heading (MQTT, OCPP 1.6). */
  readonly title: string;
  /**
   * Each count's label by key, in the order shown; the first is the module's column in the cluster's
   * nodes table.
   */
  readonly labels: Readonly<Record<string, string>>;
  /** The counts now: called on the dashboard feed's tick only, so nothing is counted while nobody watches. */
  read(): Figures;
}

/** One module's card as the dashboard gets it. */
export interface ModuleCard {
  readonly title: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly values: Figures;
}

/** Where modules, built in or an application's, report their live counts for the dashboard. */
export class ModuleFigures {
  private readonly sources = new Map<string, FiguresSource>();

  /** `module` names the card (a subprotocol, say); a second report under one name replaces the first. */
  report(module: string, source: FiguresSource): void {
    this.sources.set(module, source);
  }

  /** Every module's counts now, by module. */
  read(): Record<string, Figures> {
    const figures: Record<string, Figures> = {};
    for (const [module, source] of this.sources) figures[module] = source.read();
    return figures;
  }

  /** Every module's card, with its counts now, by module. */
  cards(): Record<string, ModuleCard> {
    const cards: Record<string, ModuleCard> = {};
    for (const [module, source] of this.sources) {
      cards[module] = { title: source.title, labels: source.labels, values: source.read() };
    }
    return cards;
  }
}
