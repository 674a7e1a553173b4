import { Body, Controller, Delete, Get, Inject, Param, Patch, Post } from '@nestjs/common';
import { Actor, AdminApi } from '#broker/admin';
import { OcppRepositories } from '../store/ocpp.repositories.js';
import { type ChargePointView } from '../store/ocpp.types.js';
import { CreateChargePointDto, UpdateChargePointDto } from './charge-point.dto.js';

/** OCPP charge points the central system knows: identity, Basic-auth password (write-only), allowed. */
@AdminApi('charge-points')
@Controller('admin/v1/charge-points')
export class ChargePointsController {
  constructor(@Inject(OcppRepositories) private readonly ocpp: OcppRepositories) {}

  @Get()
  list(): Promise<ChargePointView[]> {
    return this.ocpp.chargePoints.list();
  }

  @Get(':identity')
  get(@Param('identity') identity: string): Promise<ChargePointView> {
    return this.ocpp.chargePoints.get(identity);
  }

  @Post()
  create(@Body() body: CreateChargePointDto, @Actor() actor: string): Promise<ChargePointView> {
    return this.ocpp.chargePoints.create(
      { identity: body.identity, allowed: body.allowed ?? true, password: body.password ?? null },
      actor,
    );
  }

  @Patch(':identity')
  update(
    @Param('identity') identity: string,
    @Body() body: UpdateChargePointDto,
    @Actor() actor: string,
  ): Promise<ChargePointView> {
    return this.ocpp.chargePoints.update(identity, { allowed: body.allowed, password: body.password }, actor);
  }

  @Delete(':identity')
  remove(@Param('identity') identity: string, @Actor() actor: string): Promise<ChargePointView> {
    return this.ocpp.chargePoints.remove(identity, actor);
  }
}
