/**
 * One long poll of GET /events through an HTTP API under test (the aws e2e world's gateway, or any
 * caller of the same shape), with the page typed: each event's job and answer part, and the cursor.
 */

/** A page of GET /events. */
export interface EventsPage {
  events: {
    id?: string;
    type: string;
    data: {
      job?: { id: string; status: string; step: string; version: number };
      answer?: { step: string; offset: number; text: string };
    };
  }[];
  cursor: string;
  error?: { message: string };
}

/** What calls the API: `AwsWorld.api` has this shape. */
export interface EventsCaller {
  api(
    method: string,
    path: string,
    options?: { headers?: Record<string, string> },
  ): Promise<{ status: number; body: unknown }>;
}

/** GET /events?`query` with `headers`: the status and the page. */
export async function pollEvents(
  caller: EventsCaller,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: EventsPage }> {
  const answer = await caller.api('GET', `/events?${query}`, { headers });
  return { status: answer.status, body: answer.body as EventsPage };
}
