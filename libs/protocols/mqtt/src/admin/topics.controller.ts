import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminApi, MISSING_NODES_HEADER } from '#broker/admin';
import { type Response } from 'express';
import { BusiestTopics, type BusiestTopicsView } from './busiest-topics.js';

/** The topics MQTT clients publish to most, across the live nodes: what the dashboard's panel shows. */
@AdminApi('mqtt')
@Controller('admin/v1/mqtt/topics')
export class MqttTopicsController {
  constructor(private readonly topics: BusiestTopics) {}

  @Get('busiest')
  @ApiOperation({
    summary: 'The busiest topics MQTT clients publish to, across the live nodes (at most 100)',
    description:
      "Each node counts the PUBLISH packets in on its 100 busiest topics over the last half to full minute (space-saving: a count may include up to its overcount of other topics' messages); per topic the messages, overcounts and rates are summed over the nodes that counted it (nodes, empty on a single broker), busiest first. missing and Broker-Missing-Nodes name the live nodes that did not answer.",
  })
  async busiest(@Res({ passthrough: true }) res: Response): Promise<BusiestTopicsView> {
    const view = await this.topics.gather();
    // A partial answer never reads as a whole one.
    if (view.missing.length > 0) res.setHeader(MISSING_NODES_HEADER, view.missing.join(', '));
    return view;
  }
}
