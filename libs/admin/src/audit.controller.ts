import { Controller, Get, Inject, Query } from '@nestjs/common';
import { BrokerStore, type AuditRecord } from '#broker/store';
import { AdminApi } from './admin-api.decorator.js';
import { ListAuditQuery } from './dto/audit.dto.js';

/** Every change made through the admin API: who, when, what, before and after. Newest first. */
@AdminApi('audit')
@Controller('admin/v1/audit')
export class AuditController {
  constructor(@Inject(BrokerStore) private readonly store: BrokerStore) {}

  @Get()
  list(@Query() query: ListAuditQuery): Promise<AuditRecord[]> {
    return this.store.audit.list({ limit: query.limit ?? 100, before: query.before });
  }
}
