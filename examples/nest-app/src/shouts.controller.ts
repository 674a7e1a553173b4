import { Controller, Get } from '@nestjs/common';
import { AdminApi } from 'ws-protocol-broker';
import { type Shouter, ShoutCounts } from './shout-counts.js';

/** How many users the route lists. */
const LISTED = 20;

/** The module's admin route, under the broker's admin API: its credential, its problem answers. */
@AdminApi('shout')
@Controller('admin/v1/shouts')
export class ShoutsController {
  constructor(private readonly counts: ShoutCounts) {}

  /** The loudest users, loudest first. */
  @Get()
  list(): Promise<Shouter[]> {
    return this.counts.loudest(LISTED);
  }
}
