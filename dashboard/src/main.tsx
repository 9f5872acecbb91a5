/**
 * The opflow dashboard: Preact components in TypeScript, bundled by esbuild into `ui/app.js` when
 * `opflow serve` starts or `npm run dashboard:build` writes the static files
 * (shared/dashboard/files.ts). It talks to the job API of `opflow serve` (same origin) or of the
 * AWS stack (a static build's ui/config.json names it).
 */
import { render } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { createApi, tokenKey } from './api';
import { BatchesPage, BatchPage } from './batch-pages';
import { BulkPage } from './bulk-page';
import { TokenForm } from './components';
import { JobPage, ReportPage } from './job-page';
import { JobsPage } from './jobs-page';
import { NewJobPage } from './new-job-page';
import { OverviewPage } from './overview-page';
import { useRoute } from './routing';
import { SchedulesPage } from './schedules-page';
import type { Api, Route, Settings } from './types';
import { UploadPage } from './upload-page';
import { WebhooksPage } from './webhooks-page';

/** Settings: where the API is, what to offer in the filters. */
const defaults: Settings = {
  apiBase: '',
  workflows: [],
  statuses: ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT', 'SUCCEEDED', 'FAILED', 'CANCELLED'],
  sources: ['cli', 'api', 'webhook', 'schedule', 'bulk'],
  timeline: false,
};

/** The page the address names. */
function Page({ api, config, route }: { api: Api; config: Settings; route: Route }) {
  switch (route.page) {
    case 'job':
      return <JobPage api={api} config={config} id={route.id} />;
    case 'report':
      return <ReportPage api={api} config={config} id={route.id} />;
    case 'new':
      return <NewJobPage api={api} config={config} route={route} />;
    case 'upload':
      return <UploadPage api={api} config={config} />;
    case 'overview':
      return <OverviewPage api={api} config={config} />;
    case 'batches':
      return <BatchesPage api={api} config={config} />;
    case 'batch':
      return <BatchPage api={api} config={config} id={route.id} />;
    case 'schedules':
      return <SchedulesPage api={api} />;
    case 'webhooks':
      return <WebhooksPage api={api} route={route} />;
    case 'bulk':
      return <BulkPage api={api} config={config} route={route} />;
    default:
      return <JobsPage api={api} config={config} route={route} />;
  }
}

/** The main navigation: each list page, shown when the API behind the page serves it. */
const sections: { page: Route['page']; href: string; label: string; on: (config: Settings) => boolean }[] = [
  { page: 'jobs', href: '#/', label: 'Jobs', on: () => true },
  { page: 'overview', href: '#/overview', label: 'Overview', on: () => true },
  { page: 'batches', href: '#/batches', label: 'Batches', on: (config) => config.batches === true },
  { page: 'schedules', href: '#/schedules', label: 'Schedules', on: (config) => config.schedules === true },
  { page: 'webhooks', href: '#/webhooks', label: 'Webhooks', on: (config) => config.webhooks === true },
  { page: 'bulk', href: '#/bulk', label: 'Bulk actions', on: () => true },
];

function App({ config }: { config: Settings }) {
  const route = useRoute();
  const [signIn, setSignIn] = useState<string | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const api = useMemo(
    () =>
      createApi(config, (error) =>
        setSignIn(
          sessionStorage.getItem(tokenKey)
            ? `The token was refused: ${error.message}`
            : 'This server needs its token.',
        ),
      ),
    [config],
  );
  const signedIn = Boolean(sessionStorage.getItem(tokenKey));
  const signOut = () => {
    sessionStorage.removeItem(tokenKey);
    setGeneration(generation + 1);
  };
  return (
    <div>
      <header class="top">
        <a class="brand" href="#/">
          opflow
        </a>
        <nav aria-label="Main">
          <ul>
            {sections
              .filter((section) => section.on(config))
              .map((section) => (
                <li key={section.page}>
                  <a href={section.href} aria-current={route.page === section.page ? 'page' : undefined}>
                    {section.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div class="session">
          {config.apiBase ? <span>API: {config.apiBase}</span> : null}
          {signedIn ? (
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      {signIn !== undefined ? (
        <TokenForm
          reason={signIn}
          onSaved={() => {
            setSignIn(undefined);
            setGeneration(generation + 1);
          }}
        />
      ) : (
        <Page key={`${route.page}-${route.id ?? ''}-${generation}`} api={api} config={config} route={route} />
      )}
    </div>
  );
}

async function start() {
  let config = defaults;
  try {
    const response = await fetch('ui/config.json', { cache: 'no-store' });
    if (response.ok) config = { ...defaults, ...((await response.json()) as Partial<Settings>) };
  } catch {
    // No settings file: the job API is on this origin.
  }
  const root = document.getElementById('app')!;
  root.textContent = '';
  render(<App config={config} />, root);
}

start();
