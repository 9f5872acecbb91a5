import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../../shared/reports/html';
import {
  blocks,
  bullets,
  cellText,
  count,
  fileLink,
  heading,
  htmlToText,
  humanise,
  inline,
  outline,
  paragraphs,
  plainText,
  recordsTable,
  score,
  shorten,
  table,
  webLink,
} from '../../../shared/reports/markdown';

const html = (markdown: string) => renderHtml('t', markdown);

describe('escaping upstream text', () => {
  it('escapes inline structure but leaves snake_case and ordinary punctuation alone', () => {
    expect(inline('a *b* [c](d) `e` <f> ~g~ | h')).toBe('a \\*b\\* \\[c\\](d) \\`e\\` \\<f\\> \\~g\\~ \\| h');
    expect(inline('feature_type is _important_')).toBe('feature_type is \\_important\\_');
    expect(inline('score 0.82, see US1234567B2.')).toBe('score 0.82, see US1234567B2.');
  });

  it('keeps a line from starting a heading, list, quote or rule', () => {
    expect(inline('# Title')).toBe('\\# Title');
    expect(inline('- item')).toBe('\\- item');
    expect(inline('+ item')).toBe('\\+ item');
    expect(inline('12. item')).toBe('12\\. item');
    expect(inline('---')).toBe('\\---');
    expect(inline('> quote')).toBe('\\> quote');
    expect(inline('#hashtag and 3.5 kg')).toBe('#hashtag and 3.5 kg');
  });

  it('turns line breaks inside a line into spaces', () => {
    expect(inline('one\n# two\r\nthree')).toBe('one # two three');
    expect(cellText('  padded  ')).toBe('padded');
  });

  it('keeps paragraphs and line breaks of multi-line text, each line escaped', () => {
    expect(paragraphs('First line\n# second\n\n\n- third')).toBe('First line  \n\\# second\n\n\\- third');
    expect(paragraphs('   ')).toBe('_(none)_');
    // hard-wrapped text joins; a line break after a sentence starts a paragraph
    expect(
      paragraphs('A heat pump dryer recovers\nthe condensate heat.\nIt saves – about 30 % – energy.'),
    ).toBe('A heat pump dryer recovers the condensate heat.\n\nIt saves – about 30 % – energy.');
    expect(paragraphs(null, '')).toBe('');
  });

  it('renders hostile text as text: no element, heading, link or extra column gets through', () => {
    const hostile = '<img src=x onerror=alert(1)> | [click](javascript:alert(1)) \n# injected';
    const rendered = html(
      blocks(
        heading(2, hostile),
        paragraphs(hostile),
        table(['A', 'B'], [[hostile, 'b']]),
        bullets([hostile]),
      ),
    );
    expect(rendered).not.toContain('<img');
    expect(rendered).not.toContain('href="javascript');
    expect(rendered).not.toContain('<h1');
    expect(rendered.match(/<h2>/g)).toHaveLength(1);
    // the table keeps its two columns
    expect(rendered.match(/<td[ >]/g)).toHaveLength(2);
    expect(rendered).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('building blocks', () => {
  it('builds a GFM table with escaped cells, or a fallback when empty', () => {
    expect(
      table(
        ['#', 'Name'],
        [
          [1, 'a|b'],
          [2, null],
        ],
      ),
    ).toBe('| # | Name |\n| --- | --- |\n| 1 | a\\|b |\n| 2 |   |');
    expect(table(['x'], [], '_none found_')).toBe('_none found_');
  });

  it('links attachments by a relative path that cannot leave the report folder', () => {
    expect(fileLink('report (final).pdf', 'attachments/report (final).pdf')).toBe(
      '[report (final).pdf](attachments/report%20(final).pdf)',
    );
    expect(fileLink('x', '../../etc/passwd')).toBe('[x](etc/passwd)');
  });

  it('links only http(s) addresses, with characters that could end the link encoded', () => {
    expect(webLink('Paper', 'https://example.org/a (b)').markdown).toBe(
      '[Paper](https://example.org/a%20%28b%29)',
    );
    expect(webLink('Bad', 'javascript:alert(1)').markdown).toBe('Bad');
    expect(webLink('', 'not a url').markdown).toBe('not a url');
    expect(table(['L'], [[webLink('Paper', 'https://example.org/x|y')]])).toContain(
      '| [Paper](https://example.org/x%7Cy) |',
    );
  });

  it('turns upstream HTML citations into text', () => {
    expect(
      htmlToText(
        'Works by heat<cite title="Method &quot;A&quot;"><a href="/view/#/?patentId=1" target="_blank">1</a></cite>.',
      ),
    ).toBe('Works by heat (Method "A").');
    expect(htmlToText('a<br>b &amp; <i>c</i>')).toBe('a\nb & c');
  });

  it('tables records of unknown shape by case-insensitive field names, else by their own fields', () => {
    const records = [
      { PN: 'CN1A', TITLE: 'Coating', PBD: '2020-01-01' },
      { pn: 'US2B2', title: 'Film' },
    ];
    expect(
      recordsTable(records, [
        { header: 'Publication', keys: ['pn'] },
        { header: 'Title', keys: ['title'] },
        { header: 'Published', keys: ['pbd'] },
        { header: 'Score', keys: ['score'] },
      ]),
    ).toBe(
      '| Publication | Title | Published |\n| --- | --- | --- |\n| CN1A | Coating | 2020-01-01 |\n| US2B2 | Film |   |',
    );
    expect(recordsTable([{ weird_field: 3, nested: {} }], [{ header: 'Title', keys: ['title'] }])).toBe(
      '| Weird field |\n| --- |\n| 3 |',
    );
    expect(recordsTable([], [])).toBe('_(none)_');
  });

  it('outlines nested values of unknown shape', () => {
    expect(outline({ market_size: '1 bn', leaders: ['A', 'B'], detail: { region: 'EU' } })).toBe(
      '- **Market size**: 1 bn\n- **Leaders**: A; B\n- **Detail**\n  - **Region**: EU',
    );
    expect(outline({})).toBe('_(none)_');
  });

  it('formats numbers, shortens labels and reads unknown values', () => {
    expect(count(1234567)).toBe('1,234,567');
    expect(count(undefined)).toBe('—');
    expect(score(0.8234)).toBe('0.82');
    expect(shorten('a '.repeat(100), 20)).toBe('a a a a a a a a a a…');
    expect(humanise('head_player_analysis')).toBe('Head player analysis');
    expect(plainText({ title: 'T', other: 1 })).toBe('T');
    expect(plainText({ other: 1 })).toBe('{"other":1}');
    expect(plainText(['a', 2, null])).toBe('a; 2');
  });
});
