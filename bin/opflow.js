#!/usr/bin/env node
// Entry point of the `opflow` command: loads the TypeScript CLI through tsx so the source is the program.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../shared/cli/main.ts');
await main(process.argv);
