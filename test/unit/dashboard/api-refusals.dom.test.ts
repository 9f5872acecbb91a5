// The page's job API client: a 401 sends the person to the sign-in form only when it refused the
// token still kept. A request sent before the person signed in can be answered after they did (the
// jobs list and the live feed's token ask at once, and a loaded server answers late): that refusal
// must not put the form back over the page the new token opened. (A `.dom.test.ts` is typed with the
// page's program, dashboard/tsconfig.json: it loads the page's own DOM-typed module.)
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApi, tokenKey } from '../../../dashboard/src/api';
import type { Settings } from '../../../dashboard/src/types';

/** A tab's sessionStorage. */
function storage(): Storage {
  const values = new Map<string, string>();
  return {
    get length() {
      return values.size;
    },
    clear: () => values.clear(),
    getItem: (key: string) => values.get(key) ?? null,
    key: (index: number) => [...values.keys()][index] ?? null,
    removeItem: (key: string) => void values.delete(key),
    setItem: (key: string, value: string) => void values.set(key, value),
  };
}

const refused = () =>
  new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'a bearer token is needed' } }), {
    status: 401,
    headers: { 'content-type': 'application/json' },
  });

describe('the dashboard API client and a refused token', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks for the token on a refusal of the token it sent, and not on a late refusal of a request sent before sign-in', async () => {
    const tab = storage();
    vi.stubGlobal('sessionStorage', tab);
    const answers: ((response: Response) => void)[] = [];
    const sent: (string | undefined)[] = [];
    vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
      sent.push((init.headers as Record<string, string>).authorization);
      return new Promise<Response>((resolve) => answers.push(resolve));
    });
    const asked: string[] = [];
    const api = createApi({ apiBase: '' } as Settings, (error) => asked.push(error.message));

    // Two requests before sign-in; the first is refused and the form is shown.
    const first = api('GET', '/jobs');
    const second = api('POST', '/events/token');
    answers[0]!(refused());
    await expect(first).rejects.toMatchObject({ status: 401 });
    expect(asked).toHaveLength(1);

    // The person signs in; the second refusal arrives after: an error for its caller, no form.
    tab.setItem(tokenKey, 'the-new-token');
    answers[1]!(refused());
    await expect(second).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(asked).toHaveLength(1);

    // A refusal of the token now kept asks again.
    const third = api('GET', '/jobs');
    expect(sent).toEqual([undefined, undefined, 'Bearer the-new-token']);
    answers[2]!(refused());
    await expect(third).rejects.toMatchObject({ status: 401 });
    expect(asked).toEqual(['a bearer token is needed', 'a bearer token is needed']);
  });
});
