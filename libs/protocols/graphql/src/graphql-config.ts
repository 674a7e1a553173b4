import { ConfigSection, timerMs, timerMsOrOff } from '#broker/config';
import { z } from 'zod';

// The `graphql` key of the broker's configuration: the operator's limits, over the defaults and the
// application's (GraphqlModule's options). The GraphQL module declares it (`BrokerSection`).

const positive = z.number().int().positive().optional();

/** The GraphQL modules' limits an operator may set; each one given overrides the application's and the default. */
const graphql = z
  .object({
    limits: z
      .object({
        maxOperations: positive,
        maxDepth: positive,
        maxComplexity: positive,
        maxTokens: positive,
        maxAliases: positive,
        maxRepeatedFields: positive,
        initTimeoutMs: timerMs.optional(),
        keepAliveMs: timerMsOrOff.optional(),
        maxPendingEvents: positive,
      })
      .strict()
      .default({}),
  })
  .strict();

export const graphqlConfig = new ConfigSection('graphql', graphql.default({ limits: {} }));
