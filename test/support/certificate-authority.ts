import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IssuedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * A throwaway certificate authority (openssl's `ca` command, which can backdate a certificate, so
 * an expired one needs no waiting): EC keys, one folder of its own.
 */
export class TestCertificateAuthority {
  readonly caFile: string;
  private readonly dir: string;
  private readonly keyFile: string;
  private readonly configFile: string;
  private issued = 0;

  constructor(name: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'broker-ca-'));
    this.caFile = join(this.dir, 'ca.pem');
    this.keyFile = join(this.dir, 'ca.key');
    this.configFile = join(this.dir, 'ca.cnf');
    openssl([
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      this.keyFile,
      '-out',
      this.caFile,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]);
    writeFileSync(join(this.dir, 'index.txt'), '');
    writeFileSync(join(this.dir, 'serial'), '01\n');
    writeFileSync(
      this.configFile,
      [
        '[ca]',
        'default_ca = this',
        '[this]',
        `database = ${join(this.dir, 'index.txt')}`,
        `new_certs_dir = ${this.dir}`,
        `serial = ${join(this.dir, 'serial')}`,
        'default_md = sha256',
        'policy = any',
        'unique_subject = no',
        '[any]',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
  }

  /** A certificate for `commonName`, valid today, or (expired) for one day in 2020. */
  issue(commonName: string, options: { readonly expired?: boolean } = {}): IssuedCertificate {
    const base = join(this.dir, `issued-${++this.issued}`);
    const keyFile = `${base}.key`;
    const certFile = `${base}.pem`;
    openssl(['req', ...EC_KEY, '-keyout', keyFile, '-out', `${base}.csr`, '-subj', `/CN=${commonName}`]);
    const validity = options.expired
      ? ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z']
      : ['-days', '1'];
    openssl([
      'ca',
      '-batch',
      '-notext',
      '-config',
      this.configFile,
      '-cert',
      this.caFile,
      '-keyfile',
      this.keyFile,
      '-in',
      `${base}.csr`,
      '-out',
      certFile,
      ...validity,
    ]);
    return { certFile, keyFile };
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}
