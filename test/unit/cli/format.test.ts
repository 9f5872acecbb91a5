// printable: text from outside shown on a terminal with its control characters escaped.
import { describe, expect, it } from 'vitest';
import { describeDownload } from '../../../shared/cli/commands/batch';
import { countOf, formatTable, printable } from '../../../shared/cli/format';

describe('printable', () => {
  it.each([
    ['an escape sequence (clear screen)', 'a\u001b[2Jb', 'a\\x1b[2Jb'],
    ['a window title (OSC ... BEL)', '\u001b]0;pwned\u0007', '\\x1b]0;pwned\\x07'],
    ['a C1 control sequence introducer', 'x\u009b31m', 'x\\x9b31m'],
    ['DEL and NUL', 'a\u007fb\u0000', 'a\\x7fb\\x00'],
    ['new lines, returns and tabs', 'one\ntwo\rthree\tfour', 'one\\ntwo\\rthree\\tfour'],
    ['a right-to-left override', 'invoice\u202Efdp.exe', 'invoice\\u202efdp.exe'],
    ['bidirectional isolates', '\u2066a\u2069', '\\u2066a\\u2069'],
    ['a line separator', 'a\u2028b', 'a\\u2028b'],
  ])('escapes %s', (_name, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  it.each(['plain text', 'Überprüfung — 特許 🚀', 'quotes " and \\ backslashes'])(
    'leaves %s as it is',
    (text) => {
      expect(printable(text)).toBe(text);
    },
  );

  it('keeps table cells on one line and aligned by what is shown', () => {
    const table = formatTable(
      ['A', 'B'],
      [
        ['x\ny', 'z'],
        ['long cell', 'w'],
      ],
    );
    expect(table.split('\n')).toEqual(['A          B', 'x\\ny       z', 'long cell  w']);
  });
});

describe('countOf', () => {
  it('says one item and two items, in the messages of `opflow batch --download` too', () => {
    expect([0, 1, 2].map((n) => countOf(n, 'item'))).toEqual(['0 items', '1 item', '2 items']);
    expect(countOf(1, 'bad line')).toBe('1 bad line');
    const one = { dir: '/d', index: '/d/index.html', reports: 1, files: 1, unfinished: 1, missing: [] };
    expect(describeDownload(one)).toEqual([
      '  downloaded to /d: 1 report, 1 file; open /d/index.html',
      '  1 item not finished yet: download again once it is',
    ]);
    expect(describeDownload({ ...one, reports: 3, files: 7, unfinished: 2 })).toEqual([
      '  downloaded to /d: 3 reports, 7 files; open /d/index.html',
      '  2 items not finished yet: download again once they are',
    ]);
  });
});
