import { describe, expect, it } from 'vitest';
import { remotePollMs } from '../../../shared/cli/drive-jobs';

describe('remotePollMs', () => {
  it('reads a few remote jobs every half second and a batch at about four item reads a second, at most every 2 s', () => {
    expect([0, 1, 2, 3, 6, 8, 1000].map(remotePollMs)).toEqual([500, 500, 500, 750, 1500, 2000, 2000]);
  });
});
