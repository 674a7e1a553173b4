import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminApi, MISSING_NODES_HEADER } from '#broker/admin';
import { type Response } from 'express';
import { SnapshotSource } from './snapshot-source.js';
import { type NodesView } from './snapshot.types.js';

/** The dashboard's nodes table for a script: the same rows the feed sends, asked of every node once. */
@AdminApi('nodes')
@Controller('admin/v1/nodes')
export class NodesController {
  constructor(private readonly source: SnapshotSource) {}

  @Get()
  @ApiOperation({
    summary: "Each live node's connections, load, NATS connection and store, as the dashboard shows them",
    description:
      'answered: one row per node that answered within 500 ms (this node alone, with node null and NATS ' +
      '"not clustered", on a single node): connections; load (cpu, a share of one core since the ' +
      "node's last reading, null at its first, repeated by a reading less than 900 ms after it; " +
      'rssBytes; loopDelayP99Ms, the same window); nats (state connected, ' +
      'reconnecting or disconnected; server { version, address } as the client knows it, never a ' +
      'credential; connectedAgoMs since it last connected; heartbeatConfirmed); store (kind sqlite or ' +
      "postgres; working, the last check's outcome, null before the first; checkedAgoMs; lastError " +
      "{ message, agoMs } or null); modules (each module's live counts). missing: live nodes that did " +
      'not answer, also named in Broker-Missing-Nodes.',
  })
  async list(@Res({ passthrough: true }) res: Response): Promise<NodesView> {
    const nodes = await this.source.nodes();
    if (nodes.missing.length > 0) res.setHeader(MISSING_NODES_HEADER, nodes.missing.join(', '));
    return nodes;
  }
}
