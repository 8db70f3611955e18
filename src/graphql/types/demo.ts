import { ConflictError } from '../../errors.ts';
import { createDemoConfiguration } from '../../services/demo-configuration.ts';
import { builder } from '../builder.ts';
import { ConfigurationRef } from './configurations.ts';

builder.mutationFields((t) => ({
  createDemoConfiguration: t.field({
    type: ConfigurationRef,
    authScopes: { admin: true },
    errors: { types: [ConflictError] },
    description:
      'Creates the network-free demo (the records sample data, a SCRIPTED provider, a free model and the configuration "demo-scripted" offering the content and structure groups, privacy REDACTED) and returns its configuration. Idempotent: when it exists it is returned unchanged. ConflictError when a provider or model of that name exists without it.',
    resolve: (_root, _args, context) =>
      createDemoConfiguration({ db: context.db, secrets: context.secrets, scrubber: context.scrubber }),
  }),
}));
