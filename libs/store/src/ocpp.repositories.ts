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

  /**
   * Writes what is still on its way to the database (meter values being group-committed, last-seen
   * times written behind), each to its end even if the other fails, and takes no more last-seen
   * times: the store is closing. Rejects with the first failure.
   */
  async close(): Promise<void> {
    const results = await Promise.allSettled([this.stations.close(), this.meterValues.flush()]);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }
}
