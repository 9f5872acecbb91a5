import { describe, expect, it } from 'vitest';
import { csvCell } from '../../../shared/ingest/outputs';

describe('csvCell', () => {
  it('prefixes a quote to a cell that would start a formula, then quotes it when it must', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('\rx')).toBe('"\'\rx"');
    expect(csvCell('=A1,"x"')).toBe('"\'=A1,""x"""');
    expect(csvCell('plain, text')).toBe('"plain, text"');
    expect(csvCell('1-2')).toBe('1-2');
  });
});
