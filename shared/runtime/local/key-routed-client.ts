/**
 * The built-in sandbox gets only its own well-known key: a tenant with its own key
 * (`OPFLOW_API_KEY_<TENANT>`) talks to the platform, even while other tenants' jobs use the
 * sandbox. Every call is routed by the key it carries, so a real key cannot reach the sandbox
 * whatever chose it.
 */
import type { OpenPlatformClient } from '../../openplatform/types';

export function keyRoutedClient(options: {
  /** The client of the built-in sandbox, and the only key it may be sent. */
  sandbox: OpenPlatformClient;
  sandboxKey: string;
  /** Made on first use: the platform client, for every other key. */
  platform: () => OpenPlatformClient;
}): OpenPlatformClient {
  let platform: OpenPlatformClient | undefined;
  const pick = (apiKey: string | undefined): OpenPlatformClient => {
    if (apiKey === undefined || apiKey === options.sandboxKey) return options.sandbox;
    platform ??= options.platform();
    return platform;
  };
  return {
    call: (operationId, body, callOptions) => pick(callOptions?.apiKey).call(operationId, body, callOptions),
    callByName: (idOrRef, body, callOptions) =>
      pick(callOptions?.apiKey).callByName(idOrRef, body, callOptions),
    request: (idOrRef, input, callOptions) => pick(callOptions?.apiKey).request(idOrRef, input, callOptions),
    stream: (operationId, body, callOptions) =>
      pick(callOptions?.apiKey).stream(operationId, body, callOptions),
    fetchDocument: (url, callOptions) => pick(callOptions?.apiKey).fetchDocument(url, callOptions),
    close: async () => {
      await Promise.all([options.sandbox.close(), platform?.close()]);
    },
  };
}
