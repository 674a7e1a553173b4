import { type Kvm, type KV, type KvOptions } from '@nats-io/kv';
import { createOrOpen, led } from './create-or-open.js';

/** A KV bucket, created with `options` when missing, once its stream has a leader. */
export function openBucket(kvm: Kvm, name: string, options: Partial<KvOptions>): Promise<KV> {
  return createOrOpen(
    `bucket ${name}`,
    () => kvm.create(name, options),
    () => kvm.open(name),
    async (kv) => led((await kv.status()).streamInfo),
  );
}
