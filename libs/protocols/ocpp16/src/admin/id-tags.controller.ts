import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { Actor, AdminApi } from '#broker/admin';
import { OcppRepositories } from '../store/ocpp.repositories.js';
import { type IdTagView } from '../store/ocpp.types.js';
import { CreateIdTagDto, ListIdTagsQuery, normalizeExpiry, UpdateIdTagDto } from './id-tag.dto.js';

/** The id tags Authorize and StartTransaction look up; every change is audited. */
@AdminApi('ocpp')
@Controller('admin/v1/id-tags')
export class IdTagsController {
  constructor(@Inject(OcppRepositories) private readonly ocpp: OcppRepositories) {}

  @Get()
  list(@Query() query: ListIdTagsQuery): Promise<IdTagView[]> {
    return this.ocpp.idTags.list({ limit: query.limit ?? 100, after: query.after });
  }

  @Get(':idTag')
  get(@Param('idTag') idTag: string): Promise<IdTagView> {
    return this.ocpp.idTags.get(idTag);
  }

  @Post()
  create(@Body() body: CreateIdTagDto, @Actor() actor: string): Promise<IdTagView> {
    return this.ocpp.idTags.create(
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
    return this.ocpp.idTags.update(
      idTag,
      { status: body.status, parentIdTag: body.parentIdTag, expiryDate: normalizeExpiry(body.expiryDate) },
      actor,
    );
  }

  @Delete(':idTag')
  remove(@Param('idTag') idTag: string, @Actor() actor: string): Promise<IdTagView> {
    return this.ocpp.idTags.remove(idTag, actor);
  }
}
