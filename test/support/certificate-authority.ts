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
        'organizationName = optional',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
  }

  /** A certificate for `commonName` (and an Organization), valid today, or (expired) for one day in 2020. */
  issue(
    commonName: string,
    options: {
      readonly expired?: boolean;
      readonly organization?: string;
      /** Subject alternative names as openssl writes them: `URI:spiffe://acme/device-7,DNS:device-7.acme`. */
      readonly subjectAltName?: string;
    } = {},
  ): IssuedCertificate {
    const base = join(this.dir, `issued-${++this.issued}`);
    const keyFile = `${base}.key`;
    const certFile = `${base}.pem`;
    const subject = `${options.organization === undefined ? '' : `/O=${options.organization}`}/CN=${commonName}`;
    openssl(['req', ...EC_KEY, '-keyout', keyFile, '-out', `${base}.csr`, '-subj', subject]);
    const validity = options.expired
      ? ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z']
      : ['-days', '1'];
    openssl([
      'ca',
      '-batch',
      '-notext',
      '-config',
      this.configFile,
      ...this.signer(),
      '-in',
      `${base}.csr`,
      '-out',
      certFile,
      ...validity,
      ...this.extensions(base, options.subjectAltName),
    ]);
    return { certFile, keyFile };
  }

  /** Marks a certificate it issued as revoked; `crl` then lists it. */
  revoke(certificate: IssuedCertificate): void {
    openssl(['ca', '-config', this.configFile, ...this.signer(), '-revoke', certificate.certFile]);
  }

  /** A CRL of everything revoked so far, valid one day, written to `file`. */
  crl(file: string): void {
    openssl(['ca', '-config', this.configFile, ...this.signer(), '-gencrl', '-crldays', '1', '-out', file]);
  }

  private extensions(base: string, subjectAltName: string | undefined): string[] {
    if (subjectAltName === undefined) return [];
    const file = `${base}.ext`;
    writeFileSync(file, `[san]\nsubjectAltName = ${subjectAltName}\n`);
    return ['-extfile', file, '-extensions', 'san'];
  }

  private signer(): string[] {
    return ['-cert', this.caFile, '-keyfile', this.keyFile];
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}
