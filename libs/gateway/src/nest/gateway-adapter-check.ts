import { Injectable, type OnModuleInit, type WebSocketAdapter } from '@nestjs/common';
import { DiscoveryService, ModuleRef } from '@nestjs/core';
import { applicationConfigOf, gatewayOptionsOf } from './nest-internals.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';

/**
 * Gateways that declare a subprotocol are served only through BrokerWsAdapter. An application that
 * forgot it would otherwise get Nest's default: an attempt to load socket.io and exit, or another
 * adapter that ignores the subprotocol and destroys every upgrade on paths it does not own. Either
 * way the boot stops here, saying what to add.
 */
@Injectable()
export class GatewayAdapterCheck implements OnModuleInit {
  /** `Class ('name')` of each gateway with a subprotocol. */
  private readonly gateways: readonly { readonly owner: string; readonly name: string }[];

  constructor(
    discovery: DiscoveryService,
    moduleRef: ModuleRef,
    private readonly subprotocols: SubprotocolRegistry,
  ) {
    this.gateways = discovery.getProviders().flatMap((wrapper) => {
      const options = wrapper.metatype ? gatewayOptionsOf(wrapper.metatype) : undefined;
      const subprotocol = options?.['subprotocol'] as { name?: unknown } | undefined;
      return subprotocol === undefined ? [] : [{ owner: wrapper.name, name: String(subprotocol.name) }];
    });
    // Runs at NestFactory.create, before main.ts can call useWebSocketAdapter, which replaces this.
    const config = applicationConfigOf(moduleRef);
    // Nest types it as always set; it is null until the application sets one.
    if (this.gateways.length > 0 && (config.getIoAdapter() as WebSocketAdapter | null) === null) {
      config.setIoAdapter(new MissingAdapter(this.missing()));
    }
  }

  /** Nest has created every gateway's server by now: each must have registered its subprotocol. */
  onModuleInit(): void {
    if (this.gateways.some(({ name }) => this.subprotocols.get(name) === undefined)) {
      throw new Error(this.missing());
    }
  }

  private missing(): string {
    const which = this.gateways.map(({ owner, name }) => `${owner} ('${name}')`).join(', ');
    return (
      `${which} declare${this.gateways.length === 1 ? 's' : ''} @WebSocketGateway({ subprotocol }), ` +
      'which only BrokerWsAdapter serves: add `app.useWebSocketAdapter(new BrokerWsAdapter(app))` ' +
      'before `app.listen()`'
    );
  }
}

/** Stands in for the adapter the application did not set, so that the boot fails with our message. */
class MissingAdapter implements WebSocketAdapter {
  constructor(private readonly message: string) {}

  create(): never {
    throw new Error(this.message);
  }

  bindClientConnect(): void {}

  bindMessageHandlers(): void {}

  close(): void {}

  dispose(): void {}
}
