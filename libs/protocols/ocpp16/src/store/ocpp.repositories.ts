import { type BrokerStore } from '#broker/store';
import { ChargePointsRepository } from './charge-points.repository.js';
import { OcppConnectorsRepository } from './ocpp-connectors.repository.js';
import { OcppIdTagsRepository } from './ocpp-id-tags.repository.js';
import { OcppMeterValuesRepository } from './ocpp-meter-values.repository.js';
import { OcppStationsRepository } from './ocpp-stations.repository.js';
import { OcppTransactionsRepository } from './ocpp-transactions.repository.js';
import { OCPP_MIGRATIONS } from './ocpp.migrations.js';
import { type OcppTables } from './ocpp.schema.js';

/** The OCPP central system's state, over the broker's store (its database, its audit log). */
export class OcppRepositories {
  /** The repositories over `store`, once the module's own tables are there. */
  static async open(store: BrokerStore): Promise<OcppRepositories> {
    await store.migrate('ocpp16', OCPP_MIGRATIONS);
    return new OcppRepositories(store);
  }

  readonly chargePoints: ChargePointsRepository;
  readonly stations: OcppStationsRepository;
  readonly idTags: OcppIdTagsRepository;
  readonly connectors: OcppConnectorsRepository;
  readonly transactions: OcppTransactionsRepository;
  readonly meterValues: OcppMeterValuesRepository;

  private constructor(store: BrokerStore) {
    const db = store.db.withTables<OcppTables>();
    this.chargePoints = new ChargePointsRepository(db);
    this.stations = new OcppStationsRepository(db);
    this.idTags = new OcppIdTagsRepository(db);
    this.connectors = new OcppConnectorsRepository(db);
    this.transactions = new OcppTransactionsRepository(db);
    this.meterValues = new OcppMeterValuesRepository(db);
    // Closing the store writes first the meter values being group-committed and the last-seen times
    // written behind, and takes no more last-seen times.
    store.beforeClose(() => this.stations.close());
    store.beforeClose(() => this.meterValues.flush());
  }
}
