/**
 * The job API's guide lists every route of the route table, and nothing the table does not have:
 * a route added without a line in docs/guides/job-api.md (or one removed and left there) fails here.
 * The job API's page and the dashboard's pages name no route the table does not have, anywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type RouteSpec, routeKey, routeTable } from '../../../shared/http/routes';

/** The table as its routes' common type (each entry's own literal type has only its own fields). */
const allRoutes: readonly RouteSpec[] = routeTable;

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

  it('and the dashboard pages name no route the table does not have, anywhere on them', () => {
    const guides = new URL('../../../docs/guides/', import.meta.url);
    const pages = readdirSync(guides).filter(
      (name) => name === 'job-api.md' || /^dashboard.*\.md$/.test(name),
    );
    expect(pages).toContain('dashboard-internals.md');
    // A route of the table, its parameters written as the table does or as a value (`report/report.html`).
    const templates = allRoutes.map((route) => ({
      key: routeKey(route),
      pattern: new RegExp(
        `^${route.method} ${route.path.replace(/\{[^}]+\}/g, (param) => `(?:${param.replace(/[{}]/g, '\\$&')}|[^/{}]+${route.restParameter ? '(?:/[^/{}]+)*' : ''})`)}$`,
      ),
    }));
    // Only paths under the table's first segments: the platform's own paths (`POST /search/...`) are not routes of opflow.
    const firsts = new Set(routeTable.map((route) => route.path.split('/')[1]));
    const unknown = pages.flatMap((name) =>
      [
        ...readFileSync(new URL(name, guides), 'utf8').matchAll(
          /`((?:GET|POST|PUT|PATCH|DELETE) \/[^`?\s]*)/g,
        ),
      ]
        .map((match) => match[1]!)
        .filter((named) => firsts.has(named.split(' ')[1]!.split('/')[1]))
        .filter((named) => !templates.some(({ pattern }) => pattern.test(named)))
        .map((named) => `${name}: ${named}`),
    );
    expect(unknown, 'routes named on these pages that the route table does not have').toEqual([]);
  });
});
