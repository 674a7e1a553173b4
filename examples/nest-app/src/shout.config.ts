import { ConfigSection } from 'ws-protocol-broker';
import { z } from 'zod';

/**
 * The module's own key in the broker's configuration (`shout:` in the CONFIG file, or beside the
 * broker's keys in BrokerModule's options), validated at boot with the broker's: `shout.maxLength: 0`
 * stops the boot with that key named. Any Standard Schema validator will do; this one is zod.
 */
export const SHOUT_CONFIG = new ConfigSection(
  'shout',
  z
    .object({
      /** Longer messages close the connection 4413. */
      maxLength: z.number().int().positive().default(280),
    })
    .strict()
    .default({ maxLength: 280 }),
);
