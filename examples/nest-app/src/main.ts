import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { BrokerWsAdapter } from 'ws-protocol-broker';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule);
app.useWebSocketAdapter(new BrokerWsAdapter(app));
app.enableShutdownHooks();
await app.listen(Number(process.env['PORT'] ?? 3000));
