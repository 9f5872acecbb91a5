// The callback outbox contract on SQLite.
import { openLocalDatabase } from '../../shared/backends/local/database';
import { SqliteCallbackOutbox } from '../../shared/backends/local/sqlite-callback-outbox';
import { describeCallbackOutboxContract } from './callback-outbox.contract';

describeCallbackOutboxContract(
  'SqliteCallbackOutbox',
  async () => new SqliteCallbackOutbox(openLocalDatabase(':memory:')),
);
