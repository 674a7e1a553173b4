import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode, NoHolderError, NodeTimeoutError, RemoteError } from '#broker/cluster';
import { BROKER_LOGGER } from '#broker/gateway';
import { type Logger } from 'pino';
import { CallQueueFullError, CallTimeoutError, ConnectionClosedError } from './call-tracker.js';
import { CENTRAL_SYSTEM_ACTIONS } from './central-system-actions.js';
import { type ChargePointConnection, ChargePointSessions } from './charge-point-sessions.js';
import { type ErrorCode, OcppError } from './errors.js';
import { CallErrorResponse, InvalidResponseError } from './errors.js';

/** Asked of the node holding the charge point (node-addressed). */
const CALL = 'ocpp.call';
/** Keyed by identity: answered by whichever node holds the charge point's socket. */
const WHERE = 'ocpp.where';
/** Notice a node sends when a charge point connects to it: another node holding it lets go. */
const CLAIM = 'ocpp.claim';

export interface ChargePointLocation {
  /** The node holding the socket; null without cluster mode. */
  readonly node: string | null;
  readonly connectedAt: string;
}

interface CallRequest {
  readonly identity: string;
  readonly action: string;
  readonly payload: unknown;
}

/** A call's outcome as data, so the caller's node rebuilds the very error its admin API maps to a status. */
type CallOutcome =
  | { readonly result: unknown }
  | {
      readonly error: string;
      readonly message: string;
      readonly code?: string;
      readonly description?: string;
      readonly details?: unknown;
    };

/** The charge point left the asked node between the location and the call. */
const NOT_HERE = 'NotHere';

interface Claim {
  readonly identity: string;
  readonly node: string;
  /** When the new connection opened (epoch ms): an older claim never closes a newer socket. */
  readonly connectedAt: number;
}

function outcomeOf(err: unknown): CallOutcome {
  if (err instanceof CallErrorResponse) {
    return {
      error: err.name,
      message: err.message,
      code: err.code,
      description: err.description,
      details: err.details,
    };
  }
  if (err instanceof InvalidResponseError) {
    return { error: err.name, message: err.message, code: err.error.code, details: err.error.details };
  }
  const error = err instanceof Error ? err : new Error(String(err));
  return { error: error.name, message: error.message };
}

function errorOf(outcome: Exclude<CallOutcome, { result: unknown }>): Error {
  switch (outcome.error) {
    case 'CallErrorResponse':
      return new CallErrorResponse(
        outcome.code ?? 'GenericError',
        outcome.description ?? '',
        outcome.details ?? {},
      );
    case 'InvalidResponseError':
      return new InvalidResponseError(
        new OcppError(
          (outcome.code ?? 'FormationViolation') as ErrorCode,
          outcome.message,
          (outcome.details ?? {}) as Record<string, unknown>,
        ),
      );
    case 'CallTimeoutError':
      return new CallTimeoutError(outcome.message);
    case 'CallQueueFullError':
      return new CallQueueFullError(outcome.message);
    case 'ConnectionClosedError':
      return new ConnectionClosedError(outcome.message);
    default:
      return new Error(outcome.message);
  }
}

/**
 * Where each charge point is, across the cluster. The node holding a charge point's socket answers that
 * charge point's subject (a central-system call, a location question) for as long as it holds it, and
 * announces each new connection, so a socket lingering on another node is replaced as on one node. Without
 * cluster mode everything is this node's ChargePointSessions.
 */
@Injectable()
export class ChargePointDirectory implements OnModuleInit {
  private readonly served = new Map<ChargePointConnection, { unsubscribe(): void }>();
  private replace: ((entry: ChargePointConnection, node: string) => void) | null = null;

  constructor(
    private readonly sessions: ChargePointSessions,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    this.cluster?.onNotice(CLAIM, (body) => this.claimed(body as Claim));
    this.cluster?.serve(CALL, (body) => this.callHere(body as CallRequest));
  }

  /** How the subprotocol closes a connection that another node's newer connection replaces. */
  onReplaced(replace: (entry: ChargePointConnection, node: string) => void): void {
    this.replace = replace;
  }

  /** A charge point connected here: answer for it, and tell a node still holding it to let go. */
  held(entry: ChargePointConnection): void {
    const cluster = this.cluster;
    if (cluster === null) return;
    cluster.notify(CLAIM, {
      identity: entry.identity,
      node: cluster.nodeId,
      connectedAt: entry.connectedAt.getTime(),
    } satisfies Claim);
    try {
      this.served.set(
        entry,
        cluster.serveKey(WHERE, entry.identity, () => this.locationOf(entry)),
      );
    } catch (err) {
      // An identity too long for a subject: the charge point works, reachable only through this node.
      this.logger.warn(
        { chargePoint: entry.identity.slice(0, 64), err: (err as Error).message },
        'ocpp: not reachable from other nodes',
      );
    }
  }

  /** Its connection closed: stop answering for it. */
  released(entry: ChargePointConnection): void {
    this.served.get(entry)?.unsubscribe();
    this.served.delete(entry);
  }

  /** Where the charge point is connected, on any node; null when nowhere (or its node did not answer). */
  async locate(identity: string): Promise<ChargePointLocation | null> {
    const here = this.sessions.get(identity);
    if (here !== undefined) return this.locationOf(here);
    if (this.cluster === null) return null;
    try {
      return await this.cluster.requestKey<ChargePointLocation>(WHERE, identity, {});
    } catch (err) {
      if (err instanceof NoHolderError || err instanceof NodeTimeoutError) return null;
      throw err;
    }
  }

  /**
   * A central-system call to a charge point held by another node. Rejects as a local call would, with
   * NoHolderError when no node holds it. A holding node that leaves the cluster mid-call fails the call
   * at once (502, ConnectionClosedError); one that stops answering, after the call timeout plus the
   * cluster's request limit (504).
   */
  async callRemote(
    identity: string,
    action: string,
    payload: unknown,
    callTimeoutMs: number,
  ): Promise<unknown> {
    const cluster = this.cluster;
    const where = await this.locate(identity);
    if (cluster === null || where === null || where.node === null)
      throw new NoHolderError(`charge point ${identity} is not connected`);
    const node = where.node;
    const departure = cluster.membership.departure(node);
    const left = departure.left.then(() => {
      throw new ConnectionClosedError(`The node holding ${identity} (${node}) left the cluster mid-call.`);
    });
    let outcome: CallOutcome;
    try {
      outcome = await Promise.race([
        cluster.request<CallOutcome>(
          node,
          CALL,
          { identity, action, payload } satisfies CallRequest,
          callTimeoutMs + cluster.config.requestTimeoutMs,
        ),
        left,
      ]);
    } catch (err) {
      if (err instanceof NodeTimeoutError) {
        throw new CallTimeoutError(`No answer from charge point ${identity} through node ${node} in time.`);
      }
      if (err instanceof RemoteError || err instanceof NoHolderError) {
        throw new ConnectionClosedError(
          `Node ${node} holding ${identity} could not take the call: ${err.message}`,
        );
      }
      throw err;
    } finally {
      departure.cancel();
    }
    if ('result' in outcome) return outcome.result;
    if (outcome.error === NOT_HERE) throw new NoHolderError(outcome.message);
    throw errorOf(outcome);
  }

  private async callHere(request: CallRequest): Promise<CallOutcome> {
    if (typeof request !== 'object' || request === null || typeof request.action !== 'string') {
      return { error: 'Error', message: 'not a call request' };
    }
    if (!CENTRAL_SYSTEM_ACTIONS.has(request.action)) {
      return { error: 'Error', message: `${request.action} is not an action a central system sends` };
    }
    const entry = this.sessions.get(String(request.identity));
    if (entry === undefined)
      return { error: NOT_HERE, message: `charge point ${request.identity} is not connected` };
    try {
      return { result: await entry.session.call(request.action, request.payload) };
    } catch (err) {
      return outcomeOf(err);
    }
  }

  private locationOf(entry: ChargePointConnection): ChargePointLocation {
    return { node: this.cluster?.nodeId ?? null, connectedAt: entry.connectedAt.toISOString() };
  }

  private claimed(claim: Claim): void {
    if (typeof claim?.identity !== 'string' || typeof claim.node !== 'string') return;
    const entry = this.sessions.get(claim.identity);
    // A claim older than the socket here (a charge point that went A -> B -> A) does not close it; on a
    // tie the node id decides, so two sockets opened at once on two nodes do not both go.
    if (entry === undefined || typeof claim.connectedAt !== 'number') return;
    const mine = entry.connectedAt.getTime();
    const cluster = this.cluster;
    if (
      claim.connectedAt < mine ||
      (claim.connectedAt === mine && cluster !== null && claim.node < cluster.nodeId)
    )
      return;
    this.logger.info(
      { chargePoint: claim.identity, node: claim.node },
      'ocpp: connected to another node, letting go here',
    );
    this.replace?.(entry, claim.node);
  }
}
