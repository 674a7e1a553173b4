import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  HttpCode,
  Inject,
  Post,
} from '@nestjs/common';
import { TopicAuthorizer } from '#broker/auth';
import { assertTopicName, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { BrokerStore } from '#broker/store';
import { Actor, AdminApi } from './admin-api.decorator.js';
import { PublishDto } from './dto/publish.dto.js';

/**
 * Publishes an operator's message on the bus, as the admin actor: the topic rules apply to it as to any
 * authenticated principal (topics under `$` are the broker's), and each publish is audited (its topic,
 * not its payload). It reaches every protocol's subscribers at QoS 0, on every node.
 */
@AdminApi('bus')
@Controller('admin/v1/publish')
export class PublishController {
  constructor(
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    @Inject(TopicAuthorizer) private readonly authorizer: TopicAuthorizer,
    @Inject(BrokerStore) private readonly store: BrokerStore,
  ) {}

  @Post()
  @HttpCode(200)
  async publish(@Body() body: PublishDto, @Actor() actor: string): Promise<{ reached: number }> {
    try {
      assertTopicName(body.topic);
    } catch (err) {
      throw new BadRequestException(`topic: ${(err as Error).message}`);
    }
    const principal = { subject: actor, claims: {}, carrier: 'header' as const };
    if (
      body.topic.startsWith('$') ||
      !this.authorizer.grantFor({ principal, clientId: null }).mayPublish(body.topic)
    ) {
      throw new ForbiddenException(`${actor} may not publish to ${JSON.stringify(body.topic)}`);
    }
    const reached = this.bus.publish({
      topic: body.topic,
      payload: Buffer.from(body.payload, 'utf8'),
      ...(body.contentType === undefined ? {} : { contentType: body.contentType }),
      origin: 'admin',
      principal: actor,
    });
    await this.store.audit.record({
      actor,
      action: 'bus.publish',
      target: body.topic,
      before: null,
      after: { bytes: Buffer.byteLength(body.payload), reached },
    });
    return { reached };
  }
}
