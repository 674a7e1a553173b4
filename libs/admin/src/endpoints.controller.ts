import { Controller, Get } from '@nestjs/common';
import { ConnectionRegistry, EndpointRegistry, SubprotocolRegistry } from '#broker/gateway';
import { AdminApi } from './admin-api.decorator.js';

/** The configured endpoints as the gateway compiled them, with live connection counts (read-only). */
@AdminApi('endpoints')
@Controller('admin/v1/endpoints')
export class EndpointsController {
  constructor(
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly connections: ConnectionRegistry,
  ) {}

  @Get()
  list(): object[] {
    return this.endpoints.all().map(({ spec, config }) => {
      const open = [...this.connections.onEndpoint(spec)];
      const perSubprotocol: Record<string, number> = {};
      for (const c of open)
        perSubprotocol[c.module.options.name] = (perSubprotocol[c.module.options.name] ?? 0) + 1;
      return {
        path: config.path,
        subprotocols: config.subprotocols.map((name) => ({
          name,
          onUnsupported: this.subprotocols.get(name)?.options.onUnsupported,
        })),
        defaultModule: config.defaultModule ?? null,
        origins: config.origins,
        requireOrigin: config.requireOrigin,
        auth: { mode: config.auth.mode, carriers: config.auth.carriers },
        maxConnections: config.maxConnections ?? null,
        connections: { open: open.length, perSubprotocol },
      };
    });
  }
}
