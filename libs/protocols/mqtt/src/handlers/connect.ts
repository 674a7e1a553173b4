import { type TopicGrant } from '#broker/auth';
import { flatUuid } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type IConnackPacket, type IConnectPacket } from 'mqtt-packet';
import { credentialOf, REFUSAL_CODES } from '../authenticate.js';
import { CLOSE } from '#broker/kit';
import { type MqttClient } from '../mqtt-client.js';
import { type SessionState, type WillRecord } from '../session-state.js';
import { MqttProtocolError, RC, v3ConnackCode } from '../reason-codes.js';
import { willOf } from './will.js';
import { clientRecord, reasonText } from '../trace-records.js';

/** MQTT 3.1 limits client ids to 23 characters (3.1 spec, CONNECT payload). */
const V31_MAX_CLIENT_ID = 23;

/**
 * CONNECT: validate, authenticate (async: later packets are held meanwhile), take over any
 * connection with the same client id, resume or start the session, answer CONNACK, redeliver.
 */
export function handleConnect(client: MqttClient, packet: IConnectPacket): void {
  if (client.state !== 'connecting') throw new MqttProtocolError(RC.protocolError, 'second CONNECT');
  client.version = packet.protocolVersion ?? 4;
  const props = packet.properties ?? {};
  if (props.requestProblemInformation === false) client.problemInfo = false;

  const clean = packet.clean ?? true;
  const id = packet.clientId;
  if (id.length === 0 && (client.version === 3 || (client.version === 4 && !clean))) {
    return refuse(
      client,
      id,
      RC.clientIdNotValid,
      'an empty client id needs MQTT 3.1.1 with clean session, or MQTT 5',
    );
  }
  if (client.version === 3 && id.length > V31_MAX_CLIENT_ID) {
    return refuse(
      client,
      packet.clientId,
      RC.clientIdNotValid,
      'MQTT 3.1 client ids are at most 23 characters',
    );
  }
  if (props.authenticationMethod !== undefined) {
    return refuse(
      client,
      packet.clientId,
      RC.badAuthenticationMethod,
      'enhanced authentication is not supported',
    );
  }
  const { receiveMaximum, maximumPacketSize } = packet.properties ?? {};
  if (receiveMaximum === 0 || maximumPacketSize === 0) {
    // 5.0 sections 3.1.2.11.3 and 3.1.2.11.4: a zero here is a protocol error, not "no limit".
    return refuse(
      client,
      packet.clientId,
      RC.protocolError,
      'receive maximum and maximum packet size must not be 0',
    );
  }
  let will;
  try {
    will = willOf(client, packet);
  } catch (err) {
    if (!(err instanceof MqttProtocolError)) throw err;
    return refuse(client, packet.clientId, err.reasonCode, err.message);
  }

  client.state = 'authenticating';
  client.context
    .authenticate(credentialOf(packet))
    .then(async (outcome) => {
      if (client.state !== 'authenticating') return;
      if (!outcome.ok) return refuse(client, packet.clientId, REFUSAL_CODES[outcome.refusal], outcome.reason);
      client.will = will;
      const taking = take(client, packet, outcome.principal);
      const directory = client.broker.directory;
      const claim =
        directory === null
          ? { state: null }
          : await directory.claim(
              taking.clientId,
              clean,
              taking.expirySec,
              taking.willRecord,
              taking.keepAliveSec,
            );
      if (client.state !== 'authenticating') {
        // The session it took from another node stays here, not nowhere.
        if (directory !== null && typeof claim === 'object') {
          const state = allowed(
            claim.state,
            taking.permissions,
            client.broker.config.maxSubscriptionsPerClient,
          );
          client.broker.lifecycle.keepClaimed(taking.clientId, clean, taking.expirySec, state);
        }
        return;
      }
      if (claim === 'lost') {
        return refuse(
          client,
          packet.clientId,
          RC.serverBusy,
          'another connection with this client id won; try again',
        );
      }
      if (claim === 'unavailable') {
        return refuse(
          client,
          packet.clientId,
          RC.serverUnavailable,
          'the session store of the cluster did not answer',
        );
      }
      accept(
        client,
        packet,
        taking,
        allowed(claim.state, taking.permissions, client.broker.config.maxSubscriptionsPerClient),
      );
    })
    .catch((err: Error) => {
      // Only a bug lands here; it ends this connection, never the process (no unhandled rejection).
      client.log.error({ err: err.message }, 'mqtt connect failed');
      if (client.state === 'authenticating')
        refuse(client, packet.clientId, RC.serverUnavailable, 'server error');
      else client.close(CLOSE.internalError, 'internal error', false);
    });
}

/** A session from another node keeps the subscriptions its new credential may hold, within the limit. */
function allowed(state: SessionState | null, permissions: TopicGrant, limit: number): SessionState | null {
  if (state === null) return null;
  const subscriptions = state.subscriptions.filter((s) => permissions.maySubscribe(s.filter)).slice(0, limit);
  return { ...state, subscriptions };
}

/** What an authenticated CONNECT is about to take: its client id, session expiry and will. */
interface Taking {
  readonly clientId: string;
  /** Set when the server chose the client id. */
  readonly assigned: string | null;
  readonly requestedExpiry: number;
  readonly expirySec: number;
  readonly principal: Principal | null;
  readonly permissions: TopicGrant;
  readonly willRecord: WillRecord | null;
  /** The keep-alive the connection will have: v5's capped at `maxKeepAliveSec` (the CONNACK says so). */
  readonly keepAliveSec: number;
}

function take(client: MqttClient, packet: IConnectPacket, principal: Principal | null): Taking {
  const config = client.broker.config;
  const clean = packet.clean ?? true;
  const assigned = packet.clientId.length === 0 ? flatUuid('auto-') : null;
  const requestedExpiry =
    client.version === 5
      ? (packet.properties?.sessionExpiryInterval ?? 0)
      : clean
        ? 0
        : config.maxSessionExpirySec;
  const clientId = assigned ?? packet.clientId;
  const permissions = client.broker.authorizer.grantFor({ principal, clientId });
  const will = client.will;
  const keepalive = packet.keepalive ?? 0;
  return {
    clientId,
    assigned,
    keepAliveSec: client.version === 5 ? Math.min(keepalive, config.maxKeepAliveSec) : keepalive,
    requestedExpiry,
    expirySec: Math.min(requestedExpiry, config.maxSessionExpirySec),
    principal,
    permissions,
    willRecord:
      will === null || !permissions.mayPublish(will.message.topic)
        ? null
        : {
            message: will.message,
            delaySec: will.delaySec,
            expirySec: will.expirySec,
            principal: principal?.subject ?? null,
          },
  };
}

function accept(
  client: MqttClient,
  packet: IConnectPacket,
  taking: Taking,
  imported: SessionState | null,
): void {
  const { broker } = client;
  const config = broker.config;
  const props = packet.properties ?? {};
  const clean = packet.clean ?? true;
  const { clientId, assigned, requestedExpiry, principal } = taking;
  const attached = broker.lifecycle.attach(client, clientId, clean, taking.expirySec, imported);
  if (attached === null) {
    broker.directory?.abandon(clientId);
    return refuse(client, clientId, RC.quotaExceeded, 'too many sessions');
  }
  const { session, present: sessionPresent } = attached;
  client.clientId = clientId;
  client.principal = principal;
  client.permissions = taking.permissions;
  client.willRecord = taking.willRecord;
  session.will = taking.willRecord;
  client.session = session;

  if (props.receiveMaximum !== undefined) client.clientReceiveMaximum = props.receiveMaximum;
  if (props.maximumPacketSize !== undefined) client.clientMaxPacketSize = props.maximumPacketSize;
  if (props.topicAliasMaximum !== undefined) client.outboundAliases.maximum = props.topicAliasMaximum;

  const keepAlive = taking.keepAliveSec;
  const connack: IConnackPacket = { cmd: 'connack', sessionPresent };
  if (client.version === 5) {
    const properties: NonNullable<IConnackPacket['properties']> = {
      receiveMaximum: config.receiveMaximum,
      maximumPacketSize: config.maxPacketSize,
      topicAliasMaximum: config.topicAliasMaximum,
      retainAvailable: true,
      wildcardSubscriptionAvailable: true,
      subscriptionIdentifiersAvailable: true,
      sharedSubscriptionAvailable: true,
    };
    if (assigned !== null) properties.assignedClientIdentifier = assigned;
    if (requestedExpiry !== session.expirySec) properties.sessionExpiryInterval = session.expirySec;
    if (keepAlive !== (packet.keepalive ?? 0)) properties.serverKeepAlive = keepAlive;
    connack.reasonCode = RC.success;
    connack.properties = properties;
  } else {
    connack.returnCode = 0;
  }
  client.state = 'connected';
  if (broker.traces.active) {
    const how = `MQTT ${client.version === 5 ? '5.0' : client.version === 4 ? '3.1.1' : '3.1'}, ${sessionPresent ? 'session present' : 'new session'}`;
    broker.traces.client(clientRecord('connect', clientId, 'accepted', how));
  }
  client.write(connack);
  client.started(keepAlive);
  client.log.debug(
    { clientId, version: client.version, transport: client.context.transport, sessionPresent },
    'mqtt client connected',
  );
  broker.resume(session);
  broker.queues?.attached(session);
  broker.presenceChanged(session);
  client.releaseHeld();
}

/** CONNACK with the refusal (v5 reason code, or the nearest v3 return code), then close. */
function refuse(client: MqttClient, clientId: string, reasonCode: number, why: string): void {
  client.log.info({ reasonCode, why, remoteAddress: client.context.remoteAddress }, 'mqtt connect refused');
  if (client.broker.traces.active) {
    client.broker.traces.client(
      clientRecord('connect', clientId, 'refused', `${reasonText(reasonCode)}: ${why}`),
    );
  }
  client.write(
    client.version === 5
      ? { cmd: 'connack', sessionPresent: false, reasonCode, properties: { reasonString: why } }
      : { cmd: 'connack', sessionPresent: false, returnCode: v3ConnackCode(reasonCode) },
  );
  client.close(
    reasonCode === RC.notAuthorized || reasonCode === RC.badUserNameOrPassword
      ? CLOSE.policyViolation
      : CLOSE.normal,
    why,
    false,
  );
}
