import { ConfigSection, timerMs } from '#broker/config';
import { z } from 'zod';

// The `ocpp` key of the broker's configuration: the central system's connection rules, boot policy and
// timings. The OCPP module declares it (`BrokerSection`).

const securityProfile = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);

const organization = z.string().min(1).max(64);

/** A per-endpoint override of the ocpp section's connection rules, matched by the endpoint's path. */
const ocppEndpoint = z
  .object({
    path: z.string().startsWith('/', 'must start with /'),
    allowUnknownChargePoints: z.boolean().optional(),
    securityProfile: securityProfile.optional(),
    certificateOrganization: organization.optional(),
  })
  .strict();

/** The ocpp1.6 module (central system); see docs/ocpp.md. */
const ocpp = z
  .object({
    /** Charge points not in the store may connect (they still have to boot). */
    allowUnknownChargePoints: z.boolean().default(true),
    /**
     * 0: Basic auth only where a key is stored; 1: Basic auth always; 2: Basic auth over TLS only;
     * 3: a TLS client certificate from tls.caFile naming the charge point (no Basic auth).
     */
    securityProfile: securityProfile.default(0),
    /**
     * Profile 3: the Organization (O) every charge point certificate must name (the whitepaper's
     * CPO name), so that a CA also signing others' certificates does not open the endpoint to them.
     */
    certificateOrganization: organization.optional(),
    /** accept: every BootNotification; pending-unknown / reject-unknown: charge points not in the store. */
    bootPolicy: z.enum(['accept', 'pending-unknown', 'reject-unknown']).default('accept'),
    heartbeatIntervalSec: z.number().int().positive().default(300),
    /** The interval a Pending or Rejected BootNotification answer asks the charge point to wait. */
    bootRetryIntervalSec: z.number().int().positive().default(60),
    callTimeoutMs: timerMs.default(30_000),
    /** Calls waiting behind the outstanding one, per direction and connection. */
    maxQueuedCalls: z.number().int().positive().default(16),
    endpoints: z.array(ocppEndpoint).default([]),
  })
  .strict()
  .superRefine((o, ctx) => {
    const rules = [{ ...o, path: undefined }, ...o.endpoints];
    rules.forEach((rule, index) => {
      const allow = rule.allowUnknownChargePoints ?? o.allowUnknownChargePoints;
      const profile = rule.securityProfile ?? o.securityProfile;
      if (allow && (profile === 1 || profile === 2)) {
        ctx.addIssue({
          code: 'custom',
          path:
            index === 0 ? ['allowUnknownChargePoints'] : ['endpoints', index - 1, 'allowUnknownChargePoints'],
          message: `must be false with security profile ${profile}: an unknown charge point has no key to check`,
        });
      }
    });
  });

export type OcppConfig = z.infer<typeof ocpp>;

function usesProfile3(o: OcppConfig): boolean {
  return o.securityProfile === 3 || o.endpoints.some((e) => e.securityProfile === 3);
}

export const ocppConfig = new ConfigSection('ocpp', ocpp.default(ocpp.parse({})), {
  crossCheck: (value, config) =>
    usesProfile3(value) && config.tls?.caFile === undefined
      ? [
          {
            path: ['securityProfile'],
            message:
              "OCPP security profile 3 needs tls with a caFile: the broker itself verifies the charge points' client certificates",
          },
        ]
      : [],
});
