import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway EC certificate and key (openssl), for specs that need a TLS server. */
export function selfSignedForSpecs(): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'spec-tls-'));
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(cert), key: readFileSync(key) };
}
