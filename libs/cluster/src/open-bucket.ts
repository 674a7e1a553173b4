import { type Kvm, type KV, type KvOptions } from '@nats-io/kv';

/** A KV bucket, created with `options` when missing. */
export async function openBucket(kvm: Kvm, name: string, options: Partial<KvOptions>): Promise<KV> {
  try {
    return await kvm.create(name, options);
  } catch (err) {
    // Created earlier with other limits (by another version of a node): use it as it is. If it is not
    // there either, the reason it could not be created is the one worth reading.
    try {
      return await kvm.open(name);
    } catch {
      throw new Error(`JetStream bucket ${name} cannot be created: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}
