import { Inject, Injectable, Optional } from '@nestjs/common';
import { match } from 'path-to-regexp';
import { ORIGIN_ENTRIES, type OriginEntries } from '#broker/auth';
import {
  compileAllowlist,
  type CredentialCarrier,
  type DeflateOptions,
  type EndpointSpec,
  type OriginMatcher,
  PathDecodeError,
} from '#broker/handshake';
import { type BrokerConfig, type EndpointConfig } from '#broker/config';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { TokenVerifier } from './token-verifier.js';
import { BROKER_CONFIG } from './tokens.js';

export interface RegisteredEndpoint {
  readonly spec: EndpointSpec;
  readonly config: EndpointConfig;
}

/**
 * Compiles configured endpoints into handshake specs once the modules are known. An endpoint that
 * names a module nobody registered stops the boot.
 */
@Injectable()
export class EndpointRegistry {
  private entries: RegisteredEndpoint[] = [];
  private readonly bySpec = new Map<EndpointSpec, RegisteredEndpoint>();

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly verifier: TokenVerifier,
    @Optional() @Inject(ORIGIN_ENTRIES) private readonly runtimeOrigins: OriginEntries | null = null,
  ) {}

  /** Called once at boot by GatewayBootstrap, after the modules are discovered. */
  compile(): void {
    this.entries = this.config.endpoints.map((endpoint, index) => {
      for (const name of endpoint.subprotocols) {
        if (this.subprotocols.get(name) === undefined) {
          const known = this.subprotocols.names().join(', ') || 'none';
          throw new Error(
            `endpoints.${index}.subprotocols: no module is registered for '${name}' (registered: ${known})`,
          );
        }
      }
      if (endpoint.auth.mode !== 'none' && !this.verifier.available) {
        throw new Error(
          `endpoints.${index}.auth: mode '${endpoint.auth.mode}' needs a jwt section, JWT_SECRET or the store`,
        );
      }
      return { spec: compileEndpoint(endpoint, index, this.runtimeOrigins), config: endpoint };
    });
    for (const entry of this.entries) this.bySpec.set(entry.spec, entry);
  }

  specs(): EndpointSpec[] {
    return this.entries.map((e) => e.spec);
  }

  all(): readonly RegisteredEndpoint[] {
    return this.entries;
  }

  configOf(spec: EndpointSpec): EndpointConfig {
    const entry = this.bySpec.get(spec);
    if (entry === undefined) throw new Error(`unknown endpoint ${spec.path}`);
    return entry.config;
  }
}

function compileEndpoint(
  endpoint: EndpointConfig,
  index: number,
  runtimeOrigins: OriginEntries | null,
): EndpointSpec {
  let matcher: ReturnType<typeof match<Record<string, string>>>;
  try {
    // One resource, one path (RFC 3986 paths are case-sensitive): `/OCPP/CP1` or `/ocpp/CP1/` is not
    // `/ocpp/CP1`, or one charge point could connect under several names.
    matcher = match<Record<string, string>>(endpoint.path, {
      decode: strictDecode,
      sensitive: true,
      trailing: false,
    });
  } catch (err) {
    throw new Error(`endpoints.${index}.path: ${(err as Error).message}`, { cause: err });
  }
  let configured: OriginMatcher | null = null;
  try {
    if (endpoint.origins.length > 0) configured = compileAllowlist(endpoint.origins);
  } catch (err) {
    throw new Error(`endpoints.${index}.origins: ${(err as Error).message}`, { cause: err });
  }
  // Run-time entries (admin API) join the configured ones; recompiled when they change, read per handshake.
  let origins = configured;
  if (runtimeOrigins !== null) {
    const recompile = (): void => {
      const added = runtimeOrigins.forEndpoint(endpoint.path);
      origins = added.length === 0 ? configured : compileAllowlist([...endpoint.origins, ...added]);
    };
    recompile();
    runtimeOrigins.onChange(recompile);
  }
  return {
    path: endpoint.path,
    match: (pathname) => {
      const result = matcher(pathname);
      return result === false ? null : result.params;
    },
    subprotocols: endpoint.subprotocols,
    subprotocolOrder: endpoint.subprotocolOrder,
    defaultModule: endpoint.defaultModule,
    get origins() {
      return origins;
    },
    requireOrigin: endpoint.requireOrigin,
    auth: {
      mode: endpoint.auth.mode,
      carriers: new Set<CredentialCarrier>(endpoint.auth.carriers),
      queryParam: endpoint.auth.queryParam,
      cookieName: endpoint.auth.cookieName,
      subprotocolPrefix: endpoint.auth.subprotocolPrefix,
      certificateSubject: endpoint.auth.certificateSubject,
    },
    maxConnections: endpoint.maxConnections,
    deflate: negotiated(endpoint.perMessageDeflate),
  };
}

/** What the handshake negotiates of an endpoint's compression setting (zlib's own settings stay with ws). */
function negotiated(setting: EndpointConfig['perMessageDeflate']): DeflateOptions | false | undefined {
  if (setting === undefined || setting === false) return setting;
  return {
    serverNoContextTakeover: setting.serverNoContextTakeover,
    clientNoContextTakeover: setting.clientNoContextTakeover,
    ...(setting.serverMaxWindowBits !== undefined && { serverMaxWindowBits: setting.serverMaxWindowBits }),
    ...(setting.clientMaxWindowBits !== undefined && { clientMaxWindowBits: setting.clientMaxWindowBits }),
  };
}

/**
 * A path parameter, percent-decoded; a malformed escape (not two hex digits, cut short, or bytes
 * that are not UTF-8) is the client's error, answered 400 by the decision.
 */
/** What a path segment may hold as it is sent (RFC 3986 pchar): anything else is escaped first. */
const PCHARS = /^[A-Za-z0-9\-._~%!$&'()*+,;=:@]*$/;

function strictDecode(value: string): string {
  if (!PCHARS.test(value)) {
    throw new PathDecodeError(
      `A path parameter holds a character a URL path cannot hold unescaped (${JSON.stringify(value.slice(0, 64))}): a # starts a fragment, which a request never carries; send it as %23.`,
    );
  }
  try {
    return decodeURIComponent(value);
  } catch {
    throw new PathDecodeError(
      `A path parameter holds a malformed percent-escape (${JSON.stringify(value.slice(0, 64))}): each % must start two hex digits, and the bytes must be UTF-8.`,
    );
  }
}
