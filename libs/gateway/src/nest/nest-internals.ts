import { ApplicationConfig, type ModuleRef } from '@nestjs/core';

/**
 * The places the broker reaches into Nest's private state, each checked by the spec, which fails
 * loudly when an upgrade of @nestjs/core or @nestjs/websockets moves them.
 */

/**
 * The application's ApplicationConfig (which holds its WebSocket adapter) is not a provider; Nest
 * keeps it on the container that every ModuleRef holds.
 */
export function applicationConfigOf(moduleRef: ModuleRef): ApplicationConfig {
  const container = (moduleRef as unknown as { container?: { applicationConfig?: unknown } }).container;
  const config = container?.applicationConfig;
  if (!(config instanceof ApplicationConfig)) {
    throw new Error(
      '@nestjs/core no longer keeps the ApplicationConfig at moduleRef.container.applicationConfig (see nest-internals.ts)',
    );
  }
  return config;
}

/** The metadata key under which @WebSocketGateway stores its options (GATEWAY_OPTIONS, not exported). */
export const GATEWAY_OPTIONS = 'websockets:gateway_options';

/** A @WebSocketGateway class's options, or undefined for any other class. */
export function gatewayOptionsOf(type: object): Record<string, unknown> | undefined {
  return Reflect.getMetadata(GATEWAY_OPTIONS, type) as Record<string, unknown> | undefined;
}
