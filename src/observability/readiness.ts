import type { Logger } from '../logger.ts';

/** What `/ready` answers: each dependency `ok` or `unavailable` (never the error's detail). */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, 'ok' | 'unavailable'>>;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

/** How long a dependency may take to answer before the instance counts as not ready. */
export const READY_TIMEOUT_MS = 2_000;

/**
 * Readiness of this instance: every named check must resolve within READY_TIMEOUT_MS. A failure is
 * logged at warn (its detail may carry a connection string: the logger masks known secrets) and
 * reported as `unavailable`.
 */
export function createReadiness(checks: Readonly<Record<string, () => Promise<void>>>, logger: Logger): Readiness {
  const within = async (name: string, check: () => Promise<void>): Promise<'ok' | 'unavailable'> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), late]);
      return 'ok';
    } catch (error) {
      logger.warn({ err: error, dependency: name }, 'readiness check failed');
      return 'unavailable';
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    async check() {
      const names = Object.keys(checks);
      const results = await Promise.all(names.map((name) => within(name, checks[name]!)));
      return { ready: results.every((result) => result === 'ok'), checks: Object.fromEntries(names.map((name, index) => [name, results[index]!])) };
    },
  };
}
