/** A `whsec_` secret as is; any other text is taken as the key's bytes and given the `whsec_` form. */
export function normalizeSecret(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('whsec_') ? trimmed : `whsec_${Buffer.from(trimmed, 'utf8').toString('base64')}`;
}
