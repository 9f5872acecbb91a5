/**
 * `opflow serve --help` names every route `opflow serve` answers. The help is written by hand (the
 * route table loads the request schemas, which no other command's start should pay for), so this
 * test holds it to the table: a route added to the table without a word in the help fails here.
 */
import { describe, expect, it } from 'vitest';
import { cliCommands } from '../../../shared/cli/command-table';
import { routeKey, routesServedBy } from '../../../shared/http/routes';

describe('opflow serve --help', () => {
  it('names every route opflow serve answers', () => {
    const serve = cliCommands.find((entry) => entry.name === 'serve');
    const help = typeof serve?.help === 'function' ? serve.help([]) : (serve?.help ?? '');
    const words = new Set(
      [...help.matchAll(/\b(GET|POST) (\/[^\s,();]*)/g)].map((match) => `${match[1]} ${match[2]}`),
    );
    const missing = routesServedBy('serve')
      .map(routeKey)
      .filter((key) => !words.has(key));
    expect(
      missing,
      'routes of the table missing from the help of opflow serve (shared/cli/command-table.ts)',
    ).toEqual([]);
  });
});
