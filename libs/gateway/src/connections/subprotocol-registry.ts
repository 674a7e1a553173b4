import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { type ModuleSpec } from '#broker/handshake';
import { Subprotocol } from './subprotocol.decorator.js';
import { type SubprotocolHandler, type SubprotocolOptions } from './subprotocol.types.js';

export interface RegisteredSubprotocol {
  readonly options: SubprotocolOptions;
  readonly handler: SubprotocolHandler;
  readonly spec: ModuleSpec;
  /** Who registered it: the provider's or the gateway's class name. */
  readonly owner: string;
}

/**
 * Every subprotocol module: @Subprotocol providers, found at boot, and whatever registers itself
 * (BrokerWsAdapter for each `@WebSocketGateway({ subprotocol })`). A duplicate name stops the boot.
 */
@Injectable()
export class SubprotocolRegistry {
  private readonly byName = new Map<string, RegisteredSubprotocol>();

  constructor(private readonly discovery: DiscoveryService) {}

  /** Called once at boot by GatewayLifecycle. */
  discover(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: Subprotocol.KEY })) {
      const options = this.discovery.getMetadataByDecorator(Subprotocol, wrapper);
      const handler = wrapper.instance as SubprotocolHandler | undefined;
      if (options === undefined || handler === undefined) continue;
      if (typeof handler.open !== 'function') {
        throw new Error(`@Subprotocol('${options.name}') on ${wrapper.name} must implement open()`);
      }
      this.register(options, handler, wrapper.name);
    }
  }

  /**
   * Adds a module before the endpoints are compiled (at the latest in onModuleInit). `owner` names
   * it in the error when its name is taken.
   */
  register(options: SubprotocolOptions, handler: SubprotocolHandler, owner: string): void {
    const existing = this.byName.get(options.name);
    if (existing !== undefined) {
      throw new Error(`two subprotocol modules are named '${options.name}': ${existing.owner} and ${owner}`);
    }
    this.byName.set(options.name, {
      options,
      handler,
      spec: {
        name: options.name,
        onUnsupported: options.onUnsupported,
        deflate: options.perMessageDeflate ?? false,
        ownFirstMessageAuth: options.ownFirstMessageAuth ?? false,
      },
      owner,
    });
  }

  get(name: string): RegisteredSubprotocol | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  specs(): ReadonlyMap<string, ModuleSpec> {
    return new Map([...this.byName].map(([name, entry]) => [name, entry.spec]));
  }
}
