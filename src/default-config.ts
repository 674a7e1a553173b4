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
  ],
};
