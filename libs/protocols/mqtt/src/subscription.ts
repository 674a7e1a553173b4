import { type QoS } from 'mqtt-packet';

/** One client's subscription, as granted. */
export interface Subscription {
  /** The filter exactly as subscribed, `$share/...` included: the session's key for it. */
  readonly raw: string;
  readonly filter: string;
  readonly group: string | null;
  readonly qos: QoS;
  readonly noLocal: boolean;
  readonly retainAsPublished: boolean;
  readonly retainHandling: number;
  readonly subscriptionId: number | null;
}

export interface SubscriptionMatch {
  readonly clientId: string;
  readonly subscription: Subscription;
}
