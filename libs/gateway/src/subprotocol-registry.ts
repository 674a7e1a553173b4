import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { type ModuleSpec } from '#broker/handshake';
import { Subprotocol } from './subprotocol.decorator.js';
import { type SubprotocolHandler, type SubprotocolOptions } from './subprotocol.types.js';

export interface RegisteredSubprotocol {
  readonly options: SubprotocolOptions;
  readonly handler: SubprotocolHandler;
  readonly spec: ModuleSpec;
}

/** The read API over every @Subprotocol provider; a duplicate name stops the boot. */
@Injectable()
export class SubprotocolRegistry {
  private readonly byName = new Map<string, RegisteredSubprotocol>();

  constructor(private readonly discovery: DiscoveryService) {}

  /** Called once at boot by GatewayBootstrap. */
  discover(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: Subprotocol.KEY })) {
      const options = this.discovery.getMetadataByDecorator(Subprotocol, wrapper);
      const handler = wrapper.instance as SubprotocolHandler | undefined;
      if (options === undefined || handler === undefined) continue;
      if (typeof handler.open !== 'function') {
        throw new Error(`@Subprotocol('${options.name}') on ${wrapper.name} must implement open()`);
      }
      const existing = this.byName.get(options.name);
      if (existing !== undefined) {
        throw new Error(
          `two subprotocol modules are named '${options.name}': ${existing.handler.constructor.name} and ${wrapper.name}`,
        );
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
      });
    }
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
