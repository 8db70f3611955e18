/**
 * `npm run build` step: writes the console's bundle beside the compiled route
 * (dist/src/dashboard/assets), since dist/ carries no browser sources.
 * Usage: tsx src/dashboard/build-cli.ts <out-dir>
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleDashboard } from './bundle.ts';

const out = process.argv[2];
if (!out) {
  process.stderr.write('Usage: tsx src/dashboard/build-cli.ts <out-dir>\n');
  process.exit(2);
}
const assets = await bundleDashboard();
await mkdir(out, { recursive: true });
for (const [name, asset] of assets) await writeFile(path.join(out, name), asset.body);
process.stdout.write(`console bundle written to ${path.resolve(out)}\n`);
