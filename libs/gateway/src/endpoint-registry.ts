import { Inject, Injectable } from '@nestjs/common';
import { match } from 'path-to-regexp';
import { compileAllowlist, type CredentialCarrier, type EndpointSpec } from '#broker/handshake';
import { type BrokerConfig, type EndpointConfig } from '#broker/config';
import { SubprotocolRegistry } from './subprotocol-registry.js';
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
      if (endpoint.auth.mode !== 'none' && this.config.jwt === undefined) {
        throw new Error(
          `endpoints.${index}.auth: mode '${endpoint.auth.mode}' needs a jwt section or JWT_SECRET`,
        );
      }
      return { spec: compileEndpoint(endpoint, index), config: endpoint };
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

function compileEndpoint(endpoint: EndpointConfig, index: number): EndpointSpec {
  let matcher: ReturnType<typeof match<Record<string, string>>>;
  try {
    matcher = match<Record<string, string>>(endpoint.path, { decode: safeDecode });
  } catch (err) {
    throw new Error(`endpoints.${index}.path: ${(err as Error).message}`, { cause: err });
  }
  let origins = null;
  try {
    if (endpoint.origins.length > 0) origins = compileAllowlist(endpoint.origins);
  } catch (err) {
    throw new Error(`endpoints.${index}.origins: ${(err as Error).message}`, { cause: err });
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
    origins,
    requireOrigin: endpoint.requireOrigin,
    auth: {
      mode: endpoint.auth.mode,
      carriers: new Set<CredentialCarrier>(endpoint.auth.carriers),
      queryParam: endpoint.auth.queryParam,
      cookieName: endpoint.auth.cookieName,
      subprotocolPrefix: endpoint.auth.subprotocolPrefix,
    },
    maxConnections: endpoint.maxConnections,
  };
}

/** A malformed percent-escape must not throw out of path matching; it just stays as sent. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
