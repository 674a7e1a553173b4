/** What an attacker process tells its parent at the end of its window. */
export interface AttackerReport {
  /** Attack messages the broker answered (a message or the close). */
  readonly answered: number;
  /** Connections opened again after the broker closed one. */
  readonly reconnects: number;
  /** Handshakes refused 429 (the handshake rate per address). */
  readonly refused: number;
}
