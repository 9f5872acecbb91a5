/**
 * The mail catcher under its former name, for test/e2e/aws/reviewers-channels.test.ts until it moves
 * to test/support/reviewer-receivers.ts (the one helper for every reviewer channel): `mails` is
 * the catcher's `taken`. Nothing else imports this file.
 */
import {
  type MailCatcher as Catcher,
  type CaughtMail,
  startMailCatcher as start,
} from './reviewer-receivers';

export { smtpPassword } from './reviewer-receivers';

export interface MailCatcher extends Catcher {
  mails: CaughtMail[];
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const catcher = await start();
  return { ...catcher, mails: catcher.taken };
}
