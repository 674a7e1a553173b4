/**
 * A connection as the admin API lists it (GET /admin/v1/connections). A file of its own, with no
 * imports, so the dashboard's page (a browser build) can import the type without the admin lib's Nest.
 */
export interface ConnectionView {
  readonly id: string;
  /** The node holding the connection in cluster mode; null on a single node. */
  readonly node: string | null;
  readonly endpoint: string;
  readonly subprotocol: string;
  readonly principal: string | null;
  readonly address: string;
  readonly openedAt: string;
  readonly bytesIn: number;
  readonly bytesOut: number;
}
