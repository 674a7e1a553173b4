import { Controller, Get } from '@nestjs/common';

/** The application's own HTTP route, next to the broker's /health and /admin/v1. */
@Controller('hello')
export class HelloController {
  @Get()
  hello(): { hello: string } {
    return { hello: 'world' };
  }
}
