import { Module } from '@nestjs/common';
import { BrokerSection } from '#broker/config';
import { BrokerStore } from '#broker/store';
import { ChargePointsController } from './admin/charge-points.controller.js';
import { IdTagsController } from './admin/id-tags.controller.js';
import { OcppCallsController } from './admin/ocpp-calls.controller.js';
import { OcppStateController } from './admin/ocpp-state.controller.js';
import { ChargePointDirectory } from './charge-point-directory.js';
import { ChargePointsPanel } from './charge-points-panel.js';
import { ChargePointSessions } from './charge-point-sessions.js';
import { OcppCallService } from './ocpp-calls.service.js';
import { ocppConfig } from './ocpp-config.js';
import { OcppMetrics } from './ocpp-metrics.js';
import { Ocpp16Subprotocol } from './ocpp16.subprotocol.js';
import { OcppSchemas } from './schemas.js';
import { OcppRepositories } from './store/ocpp.repositories.js';

/**
 * The OCPP-J 1.6 central system: the `ocpp1.6` subprotocol and its admin routes (charge points, id
 * tags, state, central-system calls). Needs GatewayModule, StoreModule, the topic bus (ClusterModule
 * provides it) and AdminModule in the application.
 * Its settings are the `ocpp` key of the broker config.
 */
@BrokerSection(ocppConfig)
@Module({
  controllers: [ChargePointsController, IdTagsController, OcppCallsController, OcppStateController],
  providers: [
    { provide: OcppSchemas, useFactory: () => new OcppSchemas() },
    {
      provide: OcppRepositories,
      inject: [BrokerStore],
      useFactory: (store: BrokerStore) => OcppRepositories.open(store),
    },
    ChargePointSessions,
    ChargePointDirectory,
    OcppMetrics,
    ChargePointsPanel,
    OcppCallService,
    Ocpp16Subprotocol,
  ],
  exports: [ChargePointSessions, ChargePointDirectory, OcppCallService, OcppRepositories],
})
export class Ocpp16Module {}
