// The command table: every command has its help and its line in docs/guides/cli.md (and in the
// README's table), every flag is named in a guide, `--help` shows what the table says, handlers
// are refused values that do not fit their description, and the files that build the program
// carry no casts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandEntry } from '../../../shared/cli/command-spec';
import { commandDefiner, optionKey } from '../../../shared/cli/command-spec';
import { cliCommands, globalOptions } from '../../../shared/cli/command-table';
import { ExitCode, main } from '../../../shared/cli/main';
import { type RouteSpec, routeKey, routeTable } from '../../../shared/http/routes';
import { workflows } from '../../../shared/workflows';
import { captureIo } from './capture-io';

/** The table as its routes' common type (each entry's own literal type has only its own fields). */
const allRoutes: readonly RouteSpec[] = routeTable;

const root = resolve(__dirname, '../../..');
const workflowNames = [...workflows.keys()].sort();
const text = (value: string | ((names: readonly string[]) => string)) =>
  typeof value === 'function' ? value(workflowNames) : value;

/** Every command with the words that run it (`callbacks secret`), and its page (a group's for a subcommand without one). */
function paths(
  entries: readonly CommandEntry[],
  prefix: string[] = [],
  groupDocs?: string,
): { path: string[]; entry: CommandEntry; docs: string | undefined }[] {
  return entries.flatMap((entry) => {
    const path = [...prefix, entry.name];
    const docs = entry.docs ?? groupDocs;
    return [{ path, entry, docs }, ...paths(entry.subcommands, path, docs)];
  });
}

/** The anchors of a Markdown page's headings, as GitHub spells them (lower case, punctuation dropped). */
function anchorsOf(page: string): string[] {
  const withoutFences = page.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return [...withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((match) =>
    match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-'),
  );
}

/** The part of a page from the heading `anchor` names to the next heading of its level or above. */
function sectionOf(page: string, anchor: string | undefined): string {
  if (anchor === undefined) return page;
  const lines = page.split('\n');
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && anchorsOf(line)[0] === anchor);
  if (start < 0) return '';
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}}\\s`).test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

const commands = paths(cliCommands);

async function help(path: string[]): Promise<string> {
  const io = captureIo({ env: {} });
  expect(await main(['node', 'opflow', ...path, '--help'], { io, workflows })).toBe(ExitCode.ok);
  return io.out();
}

describe('the command table', () => {
  it('holds every command, each with a summary, and options with a description', () => {
    expect(commands.length).toBeGreaterThanOrEqual(25);
    for (const { path, entry } of commands) {
      expect(text(entry.summary).trim(), path.join(' ')).not.toBe('');
      expect(entry.run !== undefined || entry.subcommands.length > 0, path.join(' ')).toBe(true);
      for (const option of entry.options) {
        expect(option.flags, path.join(' ')).toMatch(/^--[a-z0-9-]+( [<[].+[>\]])?$/);
        expect(text(option.description).trim(), option.flags).not.toBe('');
      }
    }
  });

  it('names every command in docs/guides/cli.md', () => {
    const page = readFileSync(join(root, 'docs/guides/cli.md'), 'utf8');
    const missing = commands
      .map(({ path }) => `opflow ${path.join(' ')}`)
      .filter((line) => !page.includes(line));
    expect(missing).toEqual([]);
  });

  it("names each command's page in its --help and in opflow help <command>: a page that exists, whose section names the command", async () => {
    const problems: string[] = [];
    for (const { path, entry, docs } of commands) {
      const name = `opflow ${path.join(' ')}`;
      if (path.length === 1 && entry.docs === undefined) problems.push(`${name}: no docs page`);
      if (docs === undefined) continue;
      const [file = '', anchor] = docs.split('#');
      let page: string;
      try {
        page = readFileSync(join(root, file), 'utf8');
      } catch {
        problems.push(`${name}: ${docs}: no file ${file}`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(page).includes(anchor))
        problems.push(`${name}: ${docs}: no heading #${anchor} in ${file}`);
      else if (!sectionOf(page, anchor).includes(name)) problems.push(`${name}: ${docs} does not name it`);
      const shown = await help(path);
      if (!shown.includes(`Documentation: ${docs}`)) problems.push(`${name} --help: does not name ${docs}`);
      if (path.length === 1) {
        const io = captureIo({ env: {} });
        expect(await main(['node', 'opflow', 'help', entry.name], { io, workflows })).toBe(ExitCode.ok);
        if (io.out() !== shown) problems.push(`opflow help ${entry.name}: not its --help`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("names the options every command takes in each command's --help, and the nearest command of a typo", async () => {
    const shown = (await help(['cancel'])).replace(/\s+/g, ' ');
    expect(shown).toContain(
      `Every command also takes ${globalOptions.map((option) => option.flags.split(' ')[0]).join(', ')} (opflow --help describes them).`,
    );
    const io = captureIo({ env: {} });
    expect(await main(['node', 'opflow', 'help', 'rnu'], { io, workflows })).toBe(ExitCode.usage);
    expect(io.err()).toContain('no command or workflow "rnu" (did you mean run?)');
    const typo = captureIo({ env: {} });
    expect(await main(['node', 'opflow', 'help', 'novelty-chek'], { io: typo, workflows })).toBe(
      ExitCode.usage,
    );
    expect(typo.err()).toContain('(did you mean novelty-check?)');
  });

  it("names every flag of a command on its page or in the CLI guide's commands and settings", () => {
    const guide = readFileSync(join(root, 'docs/guides/cli.md'), 'utf8');
    const missing = commands.flatMap(({ path, entry, docs }) => {
      const page = docs === undefined ? '' : readFileSync(join(root, docs.split('#')[0]!), 'utf8');
      return entry.options
        .map((option) => option.flags.split(' ')[0]!)
        .filter((flag) => !page.includes(flag) && !guide.includes(flag))
        .map((flag) => `opflow ${path.join(' ')} ${flag} (${docs})`);
    });
    expect(missing).toEqual([]);
  });

  it('names no route in opflow serve --help that the local job API does not answer', async () => {
    // serve.test.ts holds the other way: every route it answers is named there.
    const shown = (await help(['serve'])).replace(/\s+/g, ' ');
    const served = allRoutes.filter((route) => route.servedBy !== 'aws').map(routeKey);
    const named = [...shown.matchAll(/\b((?:GET|POST|PUT|PATCH|DELETE) \/[^\s,;()?]*)/g)].map(
      (match) => match[1]!,
    );
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((key) => !served.includes(key))).toEqual([]);
  });

  it("names every command in the README's command table", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const firstColumns = readme
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1] ?? '')
      .join(' ');
    const missing = cliCommands
      .map((entry) => entry.name)
      .filter((name) => !firstColumns.includes(`\`${name}`));
    expect(missing).toEqual([]);
  });

  it('names every flag in the guides (docs/guides/*.md)', () => {
    const guides = readdirSync(join(root, 'docs/guides'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(join(root, 'docs/guides', name), 'utf8'))
      .join('\n');
    const flags = [
      ...globalOptions.map((option) => `opflow ${option.flags}`),
      ...commands.flatMap(({ path, entry }) =>
        entry.options.map((option) => `opflow ${path.join(' ')} ${option.flags}`),
      ),
    ];
    const missing = flags.filter(
      (flag) => !guides.includes(flag.split(' ').find((word) => word.startsWith('--')) ?? ''),
    );
    expect(missing).toEqual([]);
  });

  it("shows each command's summary, arguments, options and help text in its --help", async () => {
    for (const { path, entry } of commands) {
      const shown = (await help(path)).replace(/\s+/g, ' ');
      const flat = (value: string) => value.replace(/\s+/g, ' ').trim();
      expect(shown, path.join(' ')).toContain(flat(text(entry.summary)));
      for (const option of entry.options) expect(shown, option.flags).toContain(option.flags);
      for (const argument of entry.arguments) {
        const bare = argument.name.replace(/[<>[\]]|\.\.\./g, '');
        expect(shown, argument.name).toContain(bare);
      }
      if (entry.help !== undefined) expect(shown, path.join(' ')).toContain(flat(text(entry.help)));
      // A group lists its own commands only: never commander's `help [command]`.
      expect(shown, path.join(' ')).not.toContain('help [command]');
      for (const sub of entry.subcommands) expect(shown, `${path.join(' ')} ${sub.name}`).toContain(sub.name);
    }
  });

  it('refuses values a handler was not described with, before the handler runs', async () => {
    const define = commandDefiner([{ flags: '--json', description: 'JSON' }] as const);
    let ran = false;
    const entry = define({
      name: 'probe',
      summary: 'a probe',
      arguments: [{ name: '<id>' }],
      options: [{ flags: '--mode <mode>', description: 'a mode', choices: ['a', 'b'], default: 'a' }],
      run: async () => {
        ran = true;
        return ExitCode.ok;
      },
    });
    const io = captureIo();
    const ctx = { io, workflows };
    const program = await import('commander').then(({ Command }) => new Command());
    await expect(entry.run?.(ctx, [], { mode: 'a' }, program)).rejects.toThrow(/arguments/);
    await expect(entry.run?.(ctx, ['x'], { mode: 'c' }, program)).rejects.toThrow(/options/);
    await expect(entry.run?.(ctx, ['x'], { mode: 'a', json: 'yes' }, program)).rejects.toThrow(/options/);
    expect(ran).toBe(false);
    expect(await entry.run?.(ctx, ['x'], { mode: 'b', json: true }, program)).toBe(ExitCode.ok);
    expect(ran).toBe(true);
  });

  it('keys options as commander does', () => {
    expect(optionKey('--base-url <url>')).toBe('baseUrl');
    expect(optionKey('--no-wait')).toBe('wait');
    expect(optionKey('--sandbox-drift <seed|off>')).toBe('sandboxDrift');
    expect(optionKey('--json')).toBe('json');
  });

  it('leaves no casts in the files that build the program', () => {
    for (const file of ['main.ts', 'program.ts', 'command-table.ts', 'command-spec.ts']) {
      const source = readFileSync(join(root, 'shared/cli', file), 'utf8');
      expect(source, file).not.toMatch(/\bas (never|unknown|any)\b/);
    }
  });
});
