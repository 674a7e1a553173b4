import { type Kysely } from 'kysely';
import { OcppConnectorsRepository } from './ocpp-connectors.repository.js';
import { OcppIdTagsRepository } from './ocpp-id-tags.repository.js';
import { OcppMeterValuesRepository } from './ocpp-meter-values.repository.js';
import { OcppStationsRepository } from './ocpp-stations.repository.js';
import { OcppTransactionsRepository } from './ocpp-transactions.repository.js';
import { type Database } from './schema.js';

/** The OCPP central system's state, grouped so BrokerStore stays one line per protocol. */
export class OcppRepositories {
  readonly stations: OcppStationsRepository;
  readonly idTags: OcppIdTagsRepository;
  readonly connectors: OcppConnectorsRepository;
  readonly transactions: OcppTransactionsRepository;
  readonly meterValues: OcppMeterValuesRepository;

  constructor(db: Kysely<Database>) {
    this.stations = new OcppStationsRepository(db);
    this.idTags = new OcppIdTagsRepository(db);
    this.connectors = new OcppConnectorsRepository(db);
    this.transactions = new OcppTransactionsRepository(db);
    this.meterValues = new OcppMeterValuesRepository(db);
  }

  /** Waits for group-committed writes still on their way to the database. */
  async flush(): Promise<void> {
    await Promise.all([this.stations.flush(), this.meterValues.flush()]);
  }
}
