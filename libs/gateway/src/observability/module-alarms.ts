/**
 * An alarm a module adds (the MQTT stream near full, an application's own): judged with the broker's
 * alarms every few seconds whether or not anyone watches, so `check` must be cheap and bounded in time.
 */
export interface ModuleAlarm {
  /** Unique across the broker's alarms: the `alarm` label of `broker_alarm_active`. */
  readonly name: string;
  /** What an operator reads. */
  readonly title: string;
  /** Null while it does not hold; else what it concerns now ('' when the title says it all). */
  check(): Promise<string | null> | string | null;
}

/** Where modules add their alarms; the dashboard's alarms judge them with their own. */
export class ModuleAlarms {
  private readonly alarms = new Map<string, ModuleAlarm>();

  /** Adds `alarm`; one with its name already there is refused (two would share one gauge). */
  add(alarm: ModuleAlarm): void {
    if (this.alarms.has(alarm.name)) throw new Error(`an alarm ${alarm.name} is already there`);
    this.alarms.set(alarm.name, alarm);
  }

  all(): readonly ModuleAlarm[] {
    return [...this.alarms.values()];
  }
}
