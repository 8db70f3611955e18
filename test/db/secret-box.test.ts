import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSecretBox, MASTER_KEY_FILE, resolveMasterKey, SecretBoxError } from '../../src/db/secret-box.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('secret box', () => {
  const box = createSecretBox(Buffer.alloc(32, 1));

  it('should round-trip a secret and never store it in the clear', () => {
    const sealed = box.seal('sk-canary-123456', 'provider:1:api_key');
    expect(sealed).not.toContain('sk-canary');
    expect(sealed.startsWith('v1.')).toBe(true);
    expect(box.open(sealed, 'provider:1:api_key')).toBe('sk-canary-123456');
  });

  it('should use a fresh nonce for every seal', () => {
    expect(box.seal('same', 'ctx')).not.toBe(box.seal('same', 'ctx'));
  });

  it('should refuse a ciphertext moved to another row', () => {
    const sealed = box.seal('secret', 'provider:1:api_key');
    expect(() => box.open(sealed, 'provider:2:api_key')).toThrowError(SecretBoxError);
  });

  it('should refuse to open under another master key, saying which setting differs', () => {
    const sealed = box.seal('secret', 'ctx');
    expect(() => createSecretBox(Buffer.alloc(32, 2)).open(sealed, 'ctx')).toThrowError(/AIRLOCK_MASTER_KEY differs/);
  });

  it('should generate a key file with mode 0600 once and reuse it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'airlock-key-'));
    dirs.push(dir);
    const first = resolveMasterKey(null, dir);
    const file = path.join(dir, MASTER_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toEqual(first);
    expect(resolveMasterKey(null, dir)).toEqual(first);
  });

  it('should prefer a configured key and write no file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'airlock-key-'));
    dirs.push(dir);
    const key = Buffer.alloc(32, 5);
    expect(resolveMasterKey(key, dir)).toBe(key);
    expect(() => statSync(path.join(dir, MASTER_KEY_FILE))).toThrow();
  });
});
