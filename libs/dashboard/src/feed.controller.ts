import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiProduces } from '@nestjs/swagger';
import { AdminApi } from '#broker/admin';
import { type Response } from 'express';
import { LiveFeed, MAX_WATCHERS, TICK_MS } from './live-feed.js';

/** A page that has not read this much of the feed is dropped (it reconnects and starts afresh). */
const MAX_BACKLOG_BYTES = 256 * 1024;

/**
 * The dashboard's live feed: server-sent events under the admin API, so the same credential opens
 * it. The page reads it with fetch() and the Authorization header (EventSource cannot set headers,
 * and a token in the URL would land in logs and history).
 */
@AdminApi('dashboard')
@Controller('admin/v1/dashboard')
export class FeedController {
  constructor(private readonly feed: LiveFeed) {}

  @Get('feed')
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: `A \`snapshot\` event every ${TICK_MS} ms (the dashboard's figures, JSON)` })
  open(@Res() res: Response): void {
    if (this.feed.full) {
      throw new ServiceUnavailableException(`At most ${MAX_WATCHERS} dashboard feeds may be open at once.`);
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const leave = this.feed.join({
      send: (frame) => {
        if (res.writableLength > MAX_BACKLOG_BYTES) {
          res.destroy();
          return false;
        }
        res.write(frame);
        return true;
      },
      end: () => res.end(),
    });
    res.once('close', leave);
  }
}
