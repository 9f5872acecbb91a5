/**
 * The reviewer's confirmation form as a browser sends it: a POST carries the hidden `form` field and
 * the nonce cookie its page's GET handed out (shared/reviewers/review-form-nonce.ts). For tests that
 * answer a link with fetch (on a connection of its own: ./fresh-fetch.ts), and for those that call the page's handler directly.
 */
import type { Response } from 'undici';
import { freshFetch } from './fresh-fetch';

/** What a GET of the page hands out: the `Cookie` header to send back and the hidden field's value. */
export interface ReviewForm {
  cookie: string;
  field: string;
}

/** The form of a page's answer: its `Set-Cookie` (name=value) and the hidden `form` field of its HTML. */
export function reviewFormOf(setCookie: string | null | undefined, html: string): ReviewForm {
  const cookie = setCookie?.split(';')[0];
  const field = /<input type="hidden" name="form" value="([^"]+)">/.exec(html)?.[1];
  if (!cookie || !field) throw new Error('the page handed out no form nonce (no cookie or no hidden field)');
  return { cookie, field };
}

/** Opens `link` as a browser would and keeps its form: the HTML and the nonce to post with. */
export async function openReviewForm(
  link: string,
): Promise<{ status: number; html: string; form: ReviewForm }> {
  const opened = await freshFetch(link);
  const html = await opened.text();
  return { status: opened.status, html, form: reviewFormOf(opened.headers.get('set-cookie'), html) };
}

/** POSTs `fields` to `link` with `form`'s nonce (opening the link first when no form is given). */
export async function postReviewForm(
  link: string,
  fields: [string, string][],
  form?: ReviewForm,
): Promise<Response> {
  const nonce = form ?? (await openReviewForm(link)).form;
  return freshFetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: nonce.cookie },
    body: new URLSearchParams([...fields, ['form', nonce.field]]).toString(),
  });
}
