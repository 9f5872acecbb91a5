/**
 * The job API's guide lists every route of the route table, and nothing the table does not have:
 * a route added without a line in docs/guides/job-api.md (or one removed and left there) fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routeKey, routeTable } from '../../../shared/http/routes';

const guide = readFileSync(new URL('../../../docs/guides/job-api.md', import.meta.url), 'utf8');

/** Every `METHOD /path` written in backticks in the guide's routes section. */
function documentedRoutes(): Set<string> {
  const section = guide.split(/^## /m).find((part) => part.startsWith('Routes'));
  if (section === undefined) throw new Error('docs/guides/job-api.md has no "## Routes" section');
  return new Set(
    [...section.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) \/[^`?\s]*)/g)].map((match) => match[1]!),
  );
}

describe('docs/guides/job-api.md', () => {
  const documented = documentedRoutes();

  it('lists every route of the route table', () => {
    const missing = routeTable.map(routeKey).filter((key) => !documented.has(key));
    expect(missing, 'routes without a line in the Routes section of docs/guides/job-api.md').toEqual([]);
  });

  it('lists no route the table does not have', () => {
    const keys = new Set(routeTable.map(routeKey));
    const stale = [...documented].filter((key) => !keys.has(key));
    expect(stale, 'routes in docs/guides/job-api.md that the route table does not have').toEqual([]);
  });
});
