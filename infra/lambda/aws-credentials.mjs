// Lambda bundles only (esbuild alias `@aws-sdk/credential-provider-node`, see
// infra/lib/function-bundling.ts): the SDK clients' default credential chain, reduced to the link
// that answers on Lambda. The runtime hands every function its role's credentials in
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, the first place the full chain
// looks; the rest of it (profiles, SSO, web identity, container and instance metadata, and the STS
// and SSO clients they carry) is some 130 KiB minified that a function never runs. Settings that
// name credentials themselves (the emulators' `test`/`test`) do not call it at all.
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init = {}) => fromEnv(init);
// The full chain's other exports, for a caller that imports them: environment credentials never
// need a refresh of their own.
export const credentialsWillNeedRefresh = () => false;
export const credentialsTreatedAsExpired = () => false;
