import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, secretValues } from '../src/config.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('loadConfig', () => {
  it('should default to embedded PGlite under ./data on port 4000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 4000, databaseUrl: null, dataDir: './data', logLevel: 'info', retentionDays: 30 });
    expect(config.masterKey).toBeNull();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('should name every bad variable and say what is expected', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', AIRLOCK_RETENTION_DAYS: '0' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('PORT: must be a whole number');
    expect(message).toContain('LOG_LEVEL: must be one of: fatal, error, warn, info, debug, trace, silent');
    expect(message).toContain('AIRLOCK_RETENTION_DAYS: must be at least 1');
  });

  it('should refuse a DATABASE_URL that is not PostgreSQL without echoing it', () => {
    const secretish = 'mysql://root:canary-db-password@db/app';
    expect(() => loadConfig({ DATABASE_URL: secretish })).toThrowError(/DATABASE_URL: must be a postgres/);
    try {
      loadConfig({ DATABASE_URL: secretish });
    } catch (error) {
      expect((error as Error).message).not.toContain('canary-db-password');
    }
  });

  it('should require a master key when PostgreSQL is used', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrowError(/AIRLOCK_MASTER_KEY: is required/);
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/x', AIRLOCK_MASTER_KEY: KEY }).databaseUrl).toBe('postgres://localhost/x');
  });

  it('should accept a master key as base64 or hex and refuse other lengths', () => {
    const hex = Buffer.alloc(32, 9).toString('hex');
    expect(loadConfig({ AIRLOCK_MASTER_KEY: KEY }).masterKey).toEqual(Buffer.alloc(32, 7));
    expect(loadConfig({ AIRLOCK_MASTER_KEY: hex }).masterKey).toEqual(Buffer.alloc(32, 9));
    expect(() => loadConfig({ AIRLOCK_MASTER_KEY: 'c2hvcnQ=' })).toThrowError(/AIRLOCK_MASTER_KEY: must be 32 bytes/);
  });

  it('should refuse a short admin token', () => {
    expect(() => loadConfig({ AIRLOCK_ADMIN_TOKEN: 'short' })).toThrowError(/AIRLOCK_ADMIN_TOKEN: must be at least 16/);
  });

  it('should cap running runs per user at 8 by default, take 0 as no limit, and refuse a bad value naming the variable', () => {
    expect(loadConfig({}).maxRunningRunsPerUser).toBe(8);
    expect(loadConfig({ AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '0' }).maxRunningRunsPerUser).toBe(0);
    expect(loadConfig({ AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '3' }).maxRunningRunsPerUser).toBe(3);
    expect(() => loadConfig({ AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '-1' })).toThrowError(/AIRLOCK_MAX_RUNNING_RUNS_PER_USER: must be a whole number/);
    expect(() => loadConfig({ AIRLOCK_MAX_RUNNING_RUNS_PER_USER: 'many' })).toThrowError(/AIRLOCK_MAX_RUNNING_RUNS_PER_USER: must be a whole number/);
  });

  it('should bound a GraphQL response at 16 MiB unless AIRLOCK_MAX_RESPONSE_BYTES says otherwise (1 KiB to 1 GiB)', () => {
    expect(loadConfig({}).maxResponseBytes).toBe(16 * 1024 * 1024);
    expect(loadConfig({ AIRLOCK_MAX_RESPONSE_BYTES: '65536' }).maxResponseBytes).toBe(65_536);
    expect(() => loadConfig({ AIRLOCK_MAX_RESPONSE_BYTES: '100' })).toThrowError(/AIRLOCK_MAX_RESPONSE_BYTES: must be at least 1024/);
    expect(() => loadConfig({ AIRLOCK_MAX_RESPONSE_BYTES: '16MiB' })).toThrowError(/AIRLOCK_MAX_RESPONSE_BYTES: must be a whole number/);
  });

  it('should split AIRLOCK_TOOL_MODULES on commas', () => {
    expect(loadConfig({ AIRLOCK_TOOL_MODULES: ' ./a.ts, pkg-b ,, ' }).toolModules).toEqual(['./a.ts', 'pkg-b']);
  });

  it('should take REDIS_URL only with PostgreSQL, as a redis:// or rediss:// URL, without echoing it', () => {
    const withPostgres = { DATABASE_URL: 'postgres://localhost/x', AIRLOCK_MASTER_KEY: KEY };
    expect(loadConfig({}).redisUrl).toBeNull();
    expect(loadConfig({ ...withPostgres, REDIS_URL: 'rediss://:pw@cache:6380/2' })).toMatchObject({ redisUrl: 'rediss://:pw@cache:6380/2', redisPrefix: 'airlock:' });
    expect(() => loadConfig({ REDIS_URL: 'redis://localhost:6379' })).toThrowError(/REDIS_URL: needs DATABASE_URL \(PostgreSQL\): the embedded database serves one process/);
    const secretish = 'http://:canary-redis-password@cache:6379';
    expect(() => loadConfig({ ...withPostgres, REDIS_URL: secretish })).toThrowError(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => loadConfig({ ...withPostgres, REDIS_URL: secretish })).not.toThrowError(/canary-redis-password/);
    expect(() => loadConfig({ AIRLOCK_REDIS_PREFIX: 'has space' })).toThrowError(/AIRLOCK_REDIS_PREFIX: must be 1 to 64 letters/);
    expect(loadConfig({ AIRLOCK_REDIS_PREFIX: 'prod-eu:' }).redisPrefix).toBe('prod-eu:');
    expect(loadConfig({}).subscriberBuffer).toBe(10_000);
    // Below 4 × the recorder's burst of 16 steps, a subscriber that keeps up could be cut off.
    expect(() => loadConfig({ AIRLOCK_SUBSCRIBER_BUFFER: '63' })).toThrowError(/AIRLOCK_SUBSCRIBER_BUFFER: must be at least 64/);
  });

  it('should list the secrets the log scrubber must mask, including the database and Redis passwords', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app:p%40ss-canary@db:5432/airlock',
      AIRLOCK_MASTER_KEY: KEY,
      AIRLOCK_ADMIN_TOKEN: 'admin-token-0123456789',
      REDIS_URL: 'redis://default:redis-canary@cache:6379',
    });
    expect(secretValues(config)).toEqual(expect.arrayContaining(['p@ss-canary', 'admin-token-0123456789', KEY, 'redis-canary', 'redis://default:redis-canary@cache:6379']));
  });
});
