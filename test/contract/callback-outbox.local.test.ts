// The callback outbox contract on SQLite.
import { openLocalDatabase } from '../../shared/backends/local/database';
import { SqliteCallbackOutbox } from '../../shared/backends/local/SqliteCallbackOutbox';
import { describeCallbackOutboxContract } from './callback-outbox.contract';

describeCallbackOutboxContract(
  'SqliteCallbackOutbox',
  async () => new SqliteCallbackOutbox(openLocalDatabase(':memory:')),
);
