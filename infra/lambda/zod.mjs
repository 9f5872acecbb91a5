// Lambda bundles only (esbuild alias `zod`, see infra/lib/function-bundling.ts): zod without the
// locales other than English. `import { z } from 'zod'` makes esbuild keep the whole namespace, and
// zod's namespace holds every locale (some 350 KiB minified); opflow never calls z.locales.
// Built from zod's own v4/classic/external.js minus `locales`: a zod upgrade that adds an export
// breaks the build loudly ("No matching export"), never silently.
import * as z from './zod-namespace.mjs';

export * from './zod-namespace.mjs';
export { z, z as default };
