/** The webhook deliveries received: every request to `POST /webhooks/{source}`, whatever its answer. */
import { useEffect, useState } from 'preact/hooks';
import { Notice, Pager, TableHead, When } from './components';
import { plural } from './format';
import { useFocusHeading, useLoaded } from './hooks';
import { listRefreshMs } from './jobs-page';
import { filterQuery, jobHref, pageHash } from './routing';
import type { Api, Delivery, DeliveryPage, Route } from './types';

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
  const deliveries = page?.deliveries ?? [];
  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Webhook deliveries
      </h1>
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
      {page === undefined ? (
        <p aria-busy="true">Loading deliveries…</p>
      ) : (
        <div class="table-card">
          <table class="jobs">
            <caption>
              {deliveries.length === 0
                ? 'No deliveries recorded.'
                : `${plural(deliveries.length, 'delivery', 'deliveries')} on this page, newest first; the list updates itself.`}
            </caption>
            <TableHead columns={['Received', 'Source', 'Webhook id', 'Answer', 'Outcome', 'Job']} />
            <tbody>
              {deliveries.map((delivery) => (
                <DeliveryRow key={delivery.id} delivery={delivery} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager path="/webhooks" filters={{ source }} cursor={cursor} trail={trail} next={page?.cursor} />
    </main>
  );
}
