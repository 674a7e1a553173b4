import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { Actor, AdminApi } from '#broker/admin';
import { BrokerStore, type IdTagView } from '#broker/store';
import { CreateIdTagDto, ListIdTagsQuery, normalizeExpiry, UpdateIdTagDto } from './id-tag.dto.js';

/** The id tags Authorize and StartTransaction look up; every change is audited. */
@AdminApi('ocpp')
@Controller('admin/v1/id-tags')
export class IdTagsController {
  constructor(@Inject(BrokerStore) private readonly store: BrokerStore) {}

  @Get()
  list(@Query() query: ListIdTagsQuery): Promise<IdTagView[]> {
    return this.store.ocpp.idTags.list({ limit: query.limit ?? 100, after: query.after });
  }

  @Get(':idTag')
  get(@Param('idTag') idTag: string): Promise<IdTagView> {
    return this.store.ocpp.idTags.get(idTag);
  }

  @Post()
  create(@Body() body: CreateIdTagDto, @Actor() actor: string): Promise<IdTagView> {
    return this.store.ocpp.idTags.create(
      {
        idTag: body.idTag,
        status: body.status ?? 'Accepted',
        parentIdTag: body.parentIdTag ?? null,
        expiryDate: normalizeExpiry(body.expiryDate) ?? null,
      },
      actor,
    );
  }

  @Patch(':idTag')
  update(
    @Param('idTag') idTag: string,
    @Body() body: UpdateIdTagDto,
    @Actor() actor: string,
  ): Promise<IdTagView> {
    return this.store.ocpp.idTags.update(
      idTag,
      { status: body.status, parentIdTag: body.parentIdTag, expiryDate: normalizeExpiry(body.expiryDate) },
      actor,
    );
  }

  @Delete(':idTag')
  remove(@Param('idTag') idTag: string, @Actor() actor: string): Promise<IdTagView> {
    return this.store.ocpp.idTags.remove(idTag, actor);
  }
}
