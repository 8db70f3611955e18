import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
const mode = process.argv[2];
if (mode === 'make') {
  const c = await PGlite.create('memory://');
  const dump = await c.dumpDataDir('none');
  writeFileSync('/tmp/tpl.tar', Buffer.from(await dump.arrayBuffer()));
  console.log('size', dump.size);
} else {
  const t0 = performance.now();
  const dir = mode === 'mem' ? 'memory://' : mkdtempSync('/tmp/pgl-');
  const c = await PGlite.create(dir, { loadDataDir: new Blob([readFileSync('/tmp/tpl.tar')]), startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });
  await c.query('select 1');
  console.log(mode, 'load+open', (performance.now() - t0).toFixed(0), 'rss', (process.memoryUsage().rss / 2 ** 20).toFixed(0));
}
