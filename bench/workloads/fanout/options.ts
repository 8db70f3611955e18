/** What the fan-out workload is asked for, and the variants it measures. */

export interface FanoutOptions {
  /** Subscribers (one graphql-ws connection each), spread evenly over the runs. */
  readonly clients: number;
  /** Runs running at the same time. */
  readonly runs: number;
  /** Tool rounds per run (K): 3K + 2 stored steps per run. */
  readonly rounds: number;
  /** Fixed latency of every provider call, ms: the pace of a run's steps. */
  readonly latencyMs: number;
  readonly repetitions: number;
  /**
   * Also measure two instances on one PostgreSQL database and one Redis (a private redis-server):
   * runs on instance A, subscribers spread over A and B. Needs PostgreSQL and redis-server.
   */
  readonly twoInstances?: boolean;
}

/** `cluster`: two Airlock instances over Redis (runs on A, subscribers on A and B). */
export type Variant = 'airlock' | 'raw' | 'cluster';
