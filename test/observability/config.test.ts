import { describe, expect, it } from 'vitest';
import { loadConfig, secretValues } from '../../src/config.ts';

describe('tracing and metrics configuration', () => {
  it('should leave tracing and /metrics off when no variable asks for them', () => {
    const config = loadConfig({});
    expect(config.tracing).toBeNull();
    expect(config.metricsToken).toBeNull();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBeNull();
  });

  it('should trace to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces, or to the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      exporter: 'otlp',
      endpoint: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'airlock',
    });
    const config = loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/api/traces', OTEL_SERVICE_NAME: 'airlock-eu' });
    expect(config.tracing).toMatchObject({ endpoint: 'https://otlp.example.com/api/traces', serviceName: 'airlock-eu' });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing?.endpoint).toBe('http://localhost:4318/v1/traces');
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing?.exporter).toBe('console');
  });

  it('should parse the exporter headers and treat their values as secrets', () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=observability, authorization=Bearer%20collector-canary-token-1234',
      AIRLOCK_METRICS_TOKEN: 'metrics-canary-token-5678',
    });
    expect(config.tracing?.headers).toEqual({ 'x-team': 'observability', authorization: 'Bearer collector-canary-token-1234' });
    expect(secretValues(config)).toEqual(expect.arrayContaining(['Bearer collector-canary-token-1234', 'metrics-canary-token-5678']));
  });

  it('should refuse a bad endpoint, exporter or short metrics token, naming the variable without echoing it', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrowError(/OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrowError(/OTEL_TRACES_EXPORTER: must be one of: otlp, console, none/);
    expect(() => loadConfig({ AIRLOCK_METRICS_TOKEN: 'short-canary' })).toThrowError(/AIRLOCK_METRICS_TOKEN: must be at least 16 characters/);
    expect(() => loadConfig({ AIRLOCK_METRICS_TOKEN: 'short-canary' })).not.toThrowError(/short-canary/);
  });
});
