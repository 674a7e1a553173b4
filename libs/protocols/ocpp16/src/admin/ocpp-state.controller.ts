import { Controller, Get, Inject, NotFoundException, Param, ParseIntPipe, Query } from '@nestjs/common';
import { AdminApi } from '#broker/admin';
import { ChargePointDirectory } from '../charge-point-directory.js';
import { OcppRepositories } from '../store/ocpp.repositories.js';
import {
  type ConnectorView,
  type MeterValueView,
  type StationView,
  type TransactionView,
} from '../store/ocpp.types.js';
import { ListTransactionsQuery } from './transactions.dto.js';

export interface ChargePointState {
  readonly identity: string;
  readonly connected: boolean;
  readonly connectedAt: string | null;
  /** The cluster node holding its socket; null when not connected or without cluster mode. */
  readonly node: string | null;
  readonly station: StationView | null;
  readonly connectors: readonly ConnectorView[];
}

/** What the central system knows: a charge point's boot, status and connection; transactions and their meter values. */
@AdminApi('ocpp')
@Controller('admin/v1')
export class OcppStateController {
  constructor(
    @Inject(OcppRepositories) private readonly ocpp: OcppRepositories,
    private readonly directory: ChargePointDirectory,
  ) {}

  @Get('charge-points/:identity/state')
  async state(@Param('identity') identity: string): Promise<ChargePointState> {
    const station = await this.ocpp.stations.get(identity);
    const location = await this.directory.locate(identity);
    if (station === null && location === null) {
      throw new NotFoundException(`charge point ${identity} has never connected`);
    }
    return {
      identity,
      connected: location !== null,
      connectedAt: location?.connectedAt ?? null,
      node: location?.node ?? null,
      station,
      connectors: await this.ocpp.connectors.list(identity),
    };
  }

  @Get('transactions')
  transactions(@Query() query: ListTransactionsQuery): Promise<TransactionView[]> {
    return this.ocpp.transactions.list({
      identity: query.identity,
      ongoing: query.ongoing === undefined ? undefined : query.ongoing === 'true',
      limit: query.limit ?? 100,
    });
  }

  @Get('transactions/:id')
  async transaction(
    @Param('id', ParseIntPipe) id: number,
  ): Promise<TransactionView & { meterValues: MeterValueView[] }> {
    const transaction = await this.ocpp.transactions.get(id);
    if (transaction === null) throw new NotFoundException(`no transaction ${id}`);
    const meterValues = await this.ocpp.meterValues.list({ transactionId: id, limit: 10_000 });
    return { ...transaction, meterValues };
  }
}
