import { installedClusterTemplate, writeClusterTemplate } from './create-db.ts';

// `npm ci` (postinstall): prepares the pristine cluster a first embedded start copies instead of
// running initdb (about 4 s saved on that start). Never fails the install: without the template the
// first start runs initdb itself.
const file = installedClusterTemplate();
console.log('Airlock: preparing the embedded database template (once per install, a few seconds)…');
try {
  await writeClusterTemplate(file);
  console.log(`Airlock: embedded database template ready (${file}).`);
} catch (error) {
  console.warn(`Airlock: could not prepare the embedded database template (${error instanceof Error ? error.message : String(error)}); the first start will create the database itself, which takes a few seconds longer.`);
}
