/** The samples of a Prometheus text exposition, keyed `name{label="value",…}` (labels sorted). */
export function samplesOf(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => `${key}="${value}"`).sort();
    samples.set(labels.length > 0 ? `${match[1]}{${labels.join(',')}}` : match[1]!, Number(match[3]));
  }
  return samples;
}

export function key(name: string, labels: Record<string, string> = {}): string {
  const parts = Object.entries(labels).map(([label, value]) => `${label}="${value}"`).sort();
  return parts.length > 0 ? `${name}{${parts.join(',')}}` : name;
}
