import { type DynamicModule } from '@nestjs/common';
import { AdminModule } from '#broker/admin';
import { ClusterModule } from '#broker/cluster';
import { type ConfigSection, parseConfig, type BrokerConfig } from '#broker/config';
import {
  BROKER_CONFIG,
  BROKER_LOGGER,
  BROKER_OPS,
  createNestRoutedLogger,
  GatewayModule,
  type OpsPaths,
} from '#broker/gateway';
import { DashboardModule } from '#broker/dashboard';
import { StoreModule } from '#broker/store';
import { type Logger } from 'pino';

/** What shapes the module itself, so it is given next to the config rather than inside it. */
export interface BrokerModuleExtras {
  /** The REST admin API under /admin/v1 and its audit log (default true). */
  readonly adminApi?: boolean;
  /** The live dashboard at /dashboard, behind the admin API's credential (default: with the admin API). */
  readonly dashboard?: boolean;
  /**
   * The pino logger the broker writes to. By default its lines go through Nest's Logger (so the
   * application's own, app.useLogger or nestjs-pino, gets them) at the config's `log.level`.
   */
  readonly logger?: Logger | undefined;
  /** Liveness at this path and readiness under `<path>/ready` (default '/health'); false: neither. */
  readonly healthPath?: string | false;
  /** Prometheus metrics (default '/metrics'); false: none. */
  readonly metricsPath?: string | false;
  /** The config keys the application's modules add, validated with the broker's (see ConfigSection). */
  readonly sections?: readonly ConfigSection<unknown>[];
}

/**
 * Completes the module ConfigurableModuleBuilder made (which provides the raw options): the
 * validated config and the logger, the gateway, the store, the bus or cluster, and the admin API.
 * Global, so an application's own modules inject TOPIC_BUS, ConnectionRegistry and the rest.
 */
export function withBrokerParts(
  definition: DynamicModule,
  extras: BrokerModuleExtras,
  options: symbol | string,
): DynamicModule {
  const parts = [GatewayModule, StoreModule, ClusterModule];
  return {
    ...definition,
    global: true,
    imports: [...(definition.imports ?? []), ...parts, ...adminParts(extras)],
    providers: [
      ...(definition.providers ?? []),
      {
        provide: BROKER_CONFIG,
        inject: [options],
        useFactory: (raw: unknown) => parseConfig(raw, extras.sections),
      },
      {
        provide: BROKER_OPS,
        useValue: {
          health: extras.healthPath ?? '/health',
          metrics: extras.metricsPath ?? '/metrics',
        } satisfies OpsPaths,
      },
      {
        provide: BROKER_LOGGER,
        inject: [BROKER_CONFIG],
        useFactory: (config: BrokerConfig) => extras.logger ?? createNestRoutedLogger(config.log.level),
      },
    ],
    exports: [BROKER_CONFIG, BROKER_LOGGER, BROKER_OPS, ...parts],
  };
}

/** The admin API, and the dashboard that needs it. */
function adminParts(extras: BrokerModuleExtras): DynamicModule['imports'] & object {
  if (extras.adminApi === false) return [];
  return extras.dashboard === false ? [AdminModule] : [AdminModule, DashboardModule];
}
