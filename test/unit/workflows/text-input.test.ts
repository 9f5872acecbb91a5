import { describe, expect, it } from 'vitest';
import { firstLine, readTextDocument, titleFromFileName } from '../../../shared/workflows/common/text-input';

describe('reading a text document', () => {
  it('takes the first Markdown heading as the title and leaves it out of the body', () => {
    const document = readTextDocument(
      '\uFEFFIntro line\r\n## Heat pump dryer ##\r\n\r\nThe dryer recovers heat.\r\n',
      'x.md',
    );
    expect(document).toEqual({
      title: 'Heat pump dryer',
      text: 'Intro line\n## Heat pump dryer ##\n\nThe dryer recovers heat.',
      body: 'Intro line\n\nThe dryer recovers heat.',
    });
  });

  it('takes a short first line standing above a blank line as the title of plain text', () => {
    const document = readTextDocument(
      'Heat pump dryer with heat recovery\n\nThe condensate is reused.',
      'x.txt',
    );
    expect(document.title).toBe('Heat pump dryer with heat recovery');
    expect(document.body).toBe('The condensate is reused.');
    // a first sentence that runs on is not a title
    expect(readTextDocument('The condensate is reused.\n\nMore.', 'dryer.txt').title).toBe('dryer');
    expect(readTextDocument('A line\nthat wraps on.', 'wrap.txt').title).toBe('wrap');
  });

  it('falls back to the file name without folders and extension', () => {
    expect(readTextDocument('No heading here.', 'examples/disclosures/solar_panel-coating.txt').title).toBe(
      'solar panel-coating',
    );
    expect(titleFromFileName('C:\\docs\\idea.v2.md')).toBe('idea.v2');
    expect(titleFromFileName('-')).toBe('untitled');
  });

  it('does not take a hashtag or code comment for a heading', () => {
    expect(readTextDocument('#battery is trending\n    # indented code', 'notes.txt').title).toBe('notes');
  });

  it('finds the first non-empty line, without heading marks, shortened', () => {
    expect(firstLine('\n\n# A title\nmore')).toBe('A title');
    expect(firstLine(`${'x'.repeat(300)}`, 10)).toBe('xxxxxxxxx…');
    expect(firstLine('   ')).toBe('');
  });
});
