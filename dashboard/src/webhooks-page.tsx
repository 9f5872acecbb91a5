/**
 * The webhook sources (of the config, and those known only by their signing secret) with their state (open, or capped with why and until when, their
 * caps and 24-hour spend, their last delivery), and the deliveries received: every request to `POST
 * /webhooks/{source}`, whatever its answer. Both refresh themselves; the sources also on each new delivery.
 */
import { useEffect, useState } from 'preact/hooks';
import { Notice, Pager, When } from './components';
import { capsText, formatTime, plural } from './format';
import { useFocusHeading, useLoaded } from './hooks';
import { listRefreshMs } from './jobs-page';
import { ListTable } from './list-table';
import { filterQuery, jobHref, pageHash } from './routing';
import type { Api, Delivery, DeliveryPage, Route, WebhookSource, WebhookSourceList } from './types';

/** What a delivery came to, in words. */
function deliveryOutcome(delivery: Delivery): string {
  if (delivery.error) return `${delivery.error.code}: ${delivery.error.message}`;
  if (delivery.jobId) return delivery.created === false ? 'repeated delivery: the same job' : 'job started';
  return '';
}

function DeliveryRow({ delivery }: { delivery: Delivery }) {
  const answer = delivery.status < 300 ? 'status-SUCCEEDED' : 'status-FAILED';
  const job = delivery.jobId;
  return (
    <tr data-delivery={delivery.id} data-answer={delivery.status}>
      <td class="nowrap">
        <When at={delivery.at} />
      </td>
      <td>{delivery.source}</td>
      <td>{delivery.webhookId ? <code>{delivery.webhookId}</code> : ''}</td>
      <td>
        <span class={`status ${answer}`}>HTTP {delivery.status}</span>
      </td>
      <td>{deliveryOutcome(delivery)}</td>
      <td>
        {job ? (
          <a href={jobHref(job)}>
            <code class="id">{job}</code>
          </a>
        ) : (
          ''
        )}
      </td>
    </tr>
  );
}

function SourceRow({ source }: { source: WebhookSource }) {
  const last = source.lastDelivery;
  return (
    <tr data-source={source.name} data-state={source.state} data-origin={source.origin}>
      <td class="nowrap">
        {source.name}
        {source.origin === 'secret' ? (
          <div class="small muted" title="Not in opflow.config.json: its payload is a job request">
            signing secret only
          </div>
        ) : null}
      </td>
      <td class="nowrap">{source.workflow}</td>
      <td class="nowrap">{source.tenant}</td>
      <td class="state-cell">
        {source.state === 'capped' ? (
          <>
            <span class="status status-PAUSED">Capped</span>{' '}
            <span class="reason-clamp" title={source.reason}>
              {source.reason}
            </span>
            {source.resumesAt ? (
              <div class="small muted">reopens {formatTime(source.resumesAt)} if nothing more is billed</div>
            ) : null}
          </>
        ) : (
          <span class="status status-ACTIVE">Open</span>
        )}
        <div class="small muted" data-caps>
          {capsText(source.caps, { freesAt: false })}
        </div>
      </td>
      <td>
        {last ? (
          <>
            <When at={last.at} /> <span class="sub">HTTP {last.status}</span>
          </>
        ) : (
          'none recorded'
        )}
      </td>
    </tr>
  );
}

/** The sources, reloaded on the list's refresh and whenever a new delivery shows. */
function SourcesTable({ api, newest }: { api: Api; newest: string | undefined }) {
  const { data, error, load } = useLoaded(
    () => api<WebhookSourceList>('GET', '/webhook-sources'),
    [api],
    listRefreshMs,
  );
  useEffect(() => {
    if (newest !== undefined) load();
  }, [newest]);
  return (
    <section aria-labelledby="webhook-sources">
      <h2 id="webhook-sources">Sources</h2>
      <Notice error={error} />
      <ListTable
        rows={data?.sources}
        loading="Loading sources…"
        columns={['Source', 'Workflow', 'Tenant', 'State', 'Last delivery']}
        empty='No webhook sources: declare them under "webhooks" in opflow.config.json, or set a signing secret.'
        caption={(sources) => {
          const secretOnly = sources.filter((source) => source.origin === 'secret').length;
          return `${plural(sources.length, 'source', 'sources')}${secretOnly > 0 ? ` (${secretOnly} known only by ${secretOnly === 1 ? 'its' : 'their'} signing secret)` : ''}: a capped one answers deliveries 429 cost-cap until its 24-hour spend is below its day cap.`;
        }}
        row={(source) => <SourceRow key={source.name} source={source} />}
      />
    </section>
  );
}

export function WebhooksPage({ api, route }: { api: Api; route: Route }) {
  const source = route.query.get('source') ?? '';
  const cursor = route.query.get('cursor') ?? '';
  const trail = route.query.getAll('prev');
  const heading = useFocusHeading('webhooks');
  const [draft, setDraft] = useState(source);
  useEffect(() => setDraft(source), [source]);
  const { data: page, error } = useLoaded(
    () => {
      const query = filterQuery({ source }, cursor);
      query.set('limit', '50');
      return api<DeliveryPage>('GET', `/webhook-deliveries?${query}`);
    },
    [api, source, cursor],
    listRefreshMs,
  );
  const filter = (event: Event) => {
    event.preventDefault();
    location.hash = pageHash('/webhooks', { source: draft.trim() }, '', []);
  };
  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Webhooks
      </h1>
      <SourcesTable api={api} newest={page?.deliveries[0]?.id} />
      <h2>Webhook deliveries</h2>
      <p class="muted small">
        Every request to <code>POST /webhooks/{'{source}'}</code> of a source with a signing secret, whatever
        it was answered, newest first (kept 30 days). A job's own outgoing callback shows on the job's page.
      </p>
      {/* biome-ignore lint/a11y/useSemanticElements: a form of role search is the landmark screen readers know */}
      <form class="filters" role="search" aria-label="Filter deliveries" onSubmit={filter}>
        <label>
          Source
          <input
            name="source"
            value={draft}
            size={16}
            onInput={(event) => setDraft(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            location.hash = '#/webhooks';
          }}
        >
          Clear
        </button>
      </form>
      <Notice error={error} />
      <ListTable
        rows={page?.deliveries}
        loading="Loading deliveries…"
        columns={['Received', 'Source', 'Webhook id', 'Answer', 'Outcome', 'Job']}
        empty="No deliveries recorded."
        caption={(deliveries) =>
          `${plural(deliveries.length, 'delivery', 'deliveries')} on this page, newest first; the list updates itself.`
        }
        row={(delivery) => <DeliveryRow key={delivery.id} delivery={delivery} />}
      />
      <Pager path="/webhooks" filters={{ source }} cursor={cursor} trail={trail} next={page?.cursor} />
    </main>
  );
}
