import { Module } from '@nestjs/common';
import { BrokerModule } from 'ws-protocol-broker';
import { MqttModule } from 'ws-protocol-broker/mqtt';

/** The broker with its MQTT module, in an application compiled to CommonJS. */
@Module({
  imports: [
    BrokerModule.forRoot({
      store: { sqlitePath: ':memory:' },
      endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'], defaultModule: 'mqtt' }],
    }),
    MqttModule,
  ],
})
export class AppModule {}
