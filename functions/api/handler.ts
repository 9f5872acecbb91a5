/** Placeholder so the CDK app can synthesize; the Lambda handlers' owner replaces this file. */
export async function handler(): Promise<never> {
  throw new Error('not implemented yet');
}
