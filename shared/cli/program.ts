/**
 * The commander program of `opflow`, built from the command table (shared/cli/command-table.ts):
 * every command's arguments, options and help come from its description, so `--help` and what is
 * parsed cannot drift apart.
 */
import { Argument, Command, Option } from 'commander';
import { version } from '../../package.json';
import { type CommandEntry, type HelpText, type OptionSpec, optionKey } from './command-spec';
import { cliCommands, globalOptions, programHelp, programSummary } from './command-table';
import type { CliContext } from './context';
import type { ExitCodeValue } from './exit-codes';

/** The program: global options, every command of the table, help; `setExitCode` gets each command's outcome. */
export function buildProgram(ctx: CliContext, setExitCode: (code: ExitCodeValue) => void): Command {
  const { io, workflows } = ctx;
  const workflowNames = [...workflows.keys()].sort();
  const text = (value: HelpText) => (typeof value === 'function' ? value(workflowNames) : value);
  const program = new Command('opflow');
  program
    .description(text(programSummary))
    .version(version, '-V, --version', 'print the version of opflow')
    .configureOutput({
      writeOut: (output) => io.stdout.write(output),
      writeErr: (output) => io.stderr.write(output),
      outputError: (output, write) => write(`opflow: ${output.replace(/^error: /, '')}`),
    })
    .exitOverride()
    .showHelpAfterError('(opflow --help lists the commands and options)');
  for (const spec of globalOptions) program.addOption(optionOf(spec, text));
  program.addHelpText('after', text(programHelp));
  // `opflow help <workflow>` describes the workflow, `opflow help <command>` the command: the
  // table's own `help` command, not commander's.
  program.helpCommand(false);

  // A command's own help lists its options only: it names the ones every command takes.
  const globalsLine = wrap(
    `Every command also takes ${globalOptions.map((spec) => spec.flags.split(' ')[0]).join(', ')} (opflow --help describes them).`,
  );
  const add = (parent: Command, entry: CommandEntry, groupDocs?: string): void => {
    const command = parent.command(entry.name).description(text(entry.summary));
    // A group's help lists its own commands, not commander's `help [command]` (`--help` is the way).
    command.helpCommand(false);
    for (const { name, description } of entry.arguments) {
      command.addArgument(new Argument(name, description === undefined ? undefined : text(description)));
    }
    for (const spec of entry.options) command.addOption(optionOf(spec, text));
    if (entry.help !== undefined) command.addHelpText('after', text(entry.help));
    const docs = entry.docs ?? groupDocs;
    command.addHelpText('after', `\n${globalsLine}${docs === undefined ? '' : `\nDocumentation: ${docs}`}`);
    const { run } = entry;
    if (run) {
      command.action(async () => {
        const code = await run(ctx, command.processedArgs, command.optsWithGlobals(), program);
        setExitCode(code);
      });
    }
    for (const sub of entry.subcommands) add(command, sub, docs);
  };
  for (const entry of cliCommands) add(program, entry);
  return program;
}

/** Text in lines of at most `width` characters, broken between words. */
function wrap(text: string, width = 100): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.join('\n');
}

function optionOf(spec: OptionSpec, text: (value: HelpText) => string): Option {
  const option = new Option(spec.flags, text(spec.description));
  if (spec.choices) option.choices(spec.choices);
  if (spec.repeatable) {
    option.argParser((value: string, previous: string[]) => [...previous, value]).default([]);
  } else if (spec.default !== undefined) {
    option.default(spec.default);
  }
  if (spec.required) option.makeOptionMandatory();
  if (option.attributeName() !== optionKey(spec.flags)) {
    throw new Error(`option ${spec.flags}: commander keeps it as ${option.attributeName()}`);
  }
  return option;
}
