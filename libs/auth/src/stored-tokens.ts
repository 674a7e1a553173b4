import { type VerifiedToken } from './jwt-verifier.js';

/** API tokens kept (hashed) in the store. Recognized by their prefix, so a JWT never costs a lookup. */
export interface StoredTokenCheck {
  recognizes(token: string): boolean;
  /** Throws CredentialError (unknown, revoked, expired) with a message that never contains the token. */
  verify(token: string): Promise<VerifiedToken>;
}

export const STORED_TOKENS = Symbol('STORED_TOKENS');
