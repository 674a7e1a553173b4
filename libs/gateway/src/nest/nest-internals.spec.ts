import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Module } from '@nestjs/common';
import { ApplicationConfig, ModuleRef, NestFactory } from '@nestjs/core';
import { WebSocketGateway } from '@nestjs/websockets';
import { applicationConfigOf, gatewayOptionsOf } from './nest-internals.js';

describe('the private Nest state the broker reads (fails when an upgrade moves it)', () => {
  it('a ModuleRef leads to the application config, the one useWebSocketAdapter writes', async () => {
    @Module({})
    class Empty {}
    const app = await NestFactory.create(Empty, { logger: false });
    const config = applicationConfigOf(app.get(ModuleRef));
    assert.ok(config instanceof ApplicationConfig);
    const adapter = {
      create: () => null,
      bindClientConnect: () => undefined,
      bindMessageHandlers: () => undefined,
      close: () => undefined,
    };
    app.useWebSocketAdapter(adapter);
    assert.equal(config.getIoAdapter(), adapter);
    await app.close();
  });

  it('@WebSocketGateway options are read back from the class', () => {
    @WebSocketGateway({ subprotocol: { name: 'x.v1' } })
    class Gateway {}
    class Plain {}
    assert.deepEqual(gatewayOptionsOf(Gateway), { subprotocol: { name: 'x.v1' } });
    assert.equal(gatewayOptionsOf(Plain), undefined);
  });
});
