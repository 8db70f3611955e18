/** Self time of a V8 `.cpuprofile`, grouped by package and by function, as tables. */
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from './children.ts';
import { renderTable } from './stats.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function summariseProfile(file: string): string {
  const out: string[] = [];
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000));
  const total = [...selfMs.values()].reduce((sum, value) => sum + value, 0);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    if (ms === 0) continue;
    const url = node.callFrame.url.replace(`file://${REPO_ROOT}/`, '');
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith('src/') ? `src/${url.split('/')[1]}` : url === '' ? `(${node.callFrame.functionName || 'native'})` : url.startsWith('node:') ? 'node internals' : url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    const name = `${node.callFrame.functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, ms]) => [name, ms.toFixed(0), `${((ms / total) * 100).toFixed(1)} %`]);
  out.push(`\nself time by package (total ${total.toFixed(0)} ms, incl. start-up and warm-up)`);
  out.push(renderTable(['package', 'ms', 'share'], top(byPackage, 20)));
  out.push('\nhottest functions (self time)');
  out.push(renderTable(['function', 'ms', 'share'], top(byFunction, 25)));
  return out.join('\n');
}
