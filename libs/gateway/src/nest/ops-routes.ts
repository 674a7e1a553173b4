import { type IncomingMessage, type ServerResponse } from 'node:http';
import { Inject, Injectable, type OnApplicationBootstrap, Optional, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { ConnectionRegistry } from '../connections/connection-registry.js';
import { HealthChecks } from '../observability/health-checks.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { applicationConfigOf } from './nest-internals.js';
import { BROKER_OPS } from '../upgrade/tokens.js';

/** Where the probes answer; false turns one off. Readiness is `<health>/ready`. */
export interface OpsPaths {
  readonly health: string | false;
  readonly metrics: string | false;
}

const DEFAULT_PATHS: OpsPaths = { health: '/health', metrics: '/metrics' };

/**
 * Liveness, readiness and Prometheus metrics for operators and orchestrators. Answered by
 * middleware ahead of the application's routes, so an app-wide guard, interceptor or global
 * prefix never changes what a probe sees; a route of the application's on one of these paths
 * stops the boot instead of being shadowed.
 */
@Injectable()
export class OpsRoutes implements OnApplicationBootstrap {
  private readonly paths: OpsPaths;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly connections: ConnectionRegistry,
    private readonly checks: HealthChecks,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(BROKER_OPS) paths: OpsPaths | null = null,
  ) {
    this.paths = paths ?? DEFAULT_PATHS;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = (req.url ?? '/').split('?', 1)[0];
    const { health, metrics } = this.paths;
    if (health !== false && path === health) return this.live(res);
    if (health !== false && path === `${health}/ready`) return void this.ready(res);
    if (metrics !== false && path === metrics) return void this.prometheus(res);
    next();
  };

  /** The application's own routes on a probe's path stop the boot, naming the controller. */
  onApplicationBootstrap(): void {
    const ours = this.ownPaths();
    if (ours.length === 0) return;
    const prefix = normalize(applicationConfigOf(this.moduleRef).getGlobalPrefix());
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype;
      if (!type || typeof type !== 'function' || wrapper.instance === undefined) continue;
      const prototype = Object.getPrototypeOf(wrapper.instance) as object;
      for (const base of asList(Reflect.getMetadata(PATH_METADATA, type))) {
        for (const name of this.scanner.getAllMethodNames(prototype)) {
          const handler = (prototype as Record<string, unknown>)[name] as object;
          const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
          if (method !== RequestMethod.GET && method !== RequestMethod.ALL) continue;
          for (const own of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
            const route = normalize(`${base}/${own}`);
            const clash = ours.find((path) => path === route || path === normalize(`${prefix}/${route}`));
            if (clash !== undefined) {
              throw new Error(
                `${wrapper.name}.${name} answers GET ${clash}, where the broker's probe answers: ` +
                  'move the probe with BrokerModule.forRoot({ ..., healthPath | metricsPath }) or turn it off with false',
              );
            }
          }
        }
      }
    }
  }

  private ownPaths(): string[] {
    const { health, metrics } = this.paths;
    return [
      ...(health === false ? [] : [health, `${health}/ready`]),
      ...(metrics === false ? [] : [metrics]),
    ];
  }

  private live(res: ServerResponse): void {
    json(res, 200, { status: 'ok', connections: this.connections.open() });
  }

  /** Ready: not draining and every service the node depends on answers (each one is listed). */
  private async ready(res: ServerResponse): Promise<void> {
    const services = await this.checks.report();
    const down = Object.values(services).includes('down');
    const status = this.connections.draining ? 'draining' : down ? 'unavailable' : 'ready';
    const details = this.checks.detailsNow();
    json(res, status === 'ready' ? 200 : 503, { status, services, ...(details === null ? {} : { details }) });
  }

  private async prometheus(res: ServerResponse): Promise<void> {
    const body = await this.metrics.registry.metrics();
    res
      .writeHead(200, { 'Content-Type': this.metrics.registry.contentType, 'Cache-Control': 'no-store' })
      .end(body);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
    })
    .end(text);
}

function asList(value: unknown): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/** One leading slash, no trailing or doubled ones: 'a//b/' -> '/a/b'. */
function normalize(path: string): string {
  return `/${path.split('/').filter(Boolean).join('/')}`;
}
