import { Body, Controller, Delete, Get, Inject, Param, Patch, Post } from '@nestjs/common';
import { BrokerStore, type ChargePointView } from '#broker/store';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { CreateChargePointDto, UpdateChargePointDto } from './dto/charge-point.dto.js';

/** OCPP charge points the central system knows: identity, Basic-auth password (write-only), allowed. */
@AdminApi('charge-points')
@Controller('admin/v1/charge-points')
export class ChargePointsController {
  constructor(@Inject(BrokerStore) private readonly store: BrokerStore) {}

  @Get()
  list(): Promise<ChargePointView[]> {
    return this.store.chargePoints.list();
  }

  @Get(':identity')
  get(@Param('identity') identity: string): Promise<ChargePointView> {
    return this.store.chargePoints.get(identity);
  }

  @Post()
  create(@Body() body: CreateChargePointDto, @Actor() actor: string): Promise<ChargePointView> {
    return this.store.chargePoints.create(
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
    return this.store.chargePoints.update(
      identity,
      { allowed: body.allowed, password: body.password },
      actor,
    );
  }

  @Delete(':identity')
  remove(@Param('identity') identity: string, @Actor() actor: string): Promise<ChargePointView> {
    return this.store.chargePoints.remove(identity, actor);
  }
}
