/** What `npm start` serves with no CONFIG file: every other setting takes its schema default. */
export const DEFAULT_CONFIG = {
  endpoints: [
    {
      path: '/chat',
      subprotocols: ['chat.v1'],
      defaultModule: 'chat.v1',
    },
    {
      path: '/mqtt',
      subprotocols: ['mqtt', 'mqttv3.1'],
      defaultModule: 'mqtt',
    },
    {
      path: '/graphql',
      subprotocols: ['graphql-transport-ws', 'graphql-ws'],
      // A client offering both gets the current protocol, whatever its order.
      subprotocolOrder: 'server',
      defaultModule: 'graphql-transport-ws',
    },
    { path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' },
    {
      path: '/ocpp/:chargePointId',
      subprotocols: ['ocpp1.6'],
      defaultModule: 'ocpp1.6',
    },
  ],
};
