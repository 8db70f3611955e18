import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Secrets at rest: AES-256-GCM with a random 96-bit nonce per value and the owner's identity as
 * additional authenticated data, so a ciphertext copied onto another row fails to decrypt.
 * Format: `v1.<nonce b64url>.<tag b64url>.<ciphertext b64url>`.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

const VERSION = 'v1';

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretBoxError('The master key must be 32 bytes.');
  const ownKey = Buffer.from(key);
  return {
    seal(plaintext, context) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', ownKey, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, nonce.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, nonce, tag, ciphertext] = sealed.split('.');
      if (version !== VERSION || nonce === undefined || tag === undefined || ciphertext === undefined) {
        throw new SecretBoxError('Stored secret has an unknown format.');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', ownKey, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError(
          'Stored secret could not be decrypted: AIRLOCK_MASTER_KEY differs from the key it was sealed with.',
        );
      }
    },
  };
}

export const MASTER_KEY_FILE = 'master.key';

/**
 * The master key for embedded mode when none is configured: read from `<dataDir>/master.key`, or
 * generated there with mode 0600 on first start. `memory://` gets a throwaway key, like its data.
 */
export function resolveMasterKey(configured: Buffer | null, dataDir: string): Buffer {
  if (configured) return configured;
  if (dataDir === 'memory://') return randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, MASTER_KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new SecretBoxError(`${file} does not hold a 32-byte base64 key; restore it or set AIRLOCK_MASTER_KEY.`);
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return key;
  }
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
