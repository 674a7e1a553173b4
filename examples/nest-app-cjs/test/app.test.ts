import 'reflect-metadata';
import assert from 'node:assert/strict';
import { type AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import WebSocket from 'ws';
import { AppModule } from '../src/app.module';

let app: INestApplication;
let url: string;

before(async () => {
  app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  url = `ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
});
after(() => app?.close());

it('a CommonJS application serves MQTT over WebSocket: CONNECT gets CONNACK', async () => {
  const ws = new WebSocket(`${url}/mqtt`, 'mqtt');
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  assert.equal(ws.protocol, 'mqtt');
  // MQTT 3.1.1 CONNECT, client id "cjs", clean session, keep-alive 0.
  ws.send(Buffer.from([0x10, 15, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0x02, 0, 0, 0, 3, 0x63, 0x6a, 0x73]));
  const connack = await new Promise<Buffer>((resolve) => ws.once('message', (data: Buffer) => resolve(data)));
  assert.deepEqual([...connack], [0x20, 2, 0, 0]);
  ws.close();
});
