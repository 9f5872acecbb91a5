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

  const add = (parent: Command, entry: CommandEntry): void => {
    const command = parent.command(entry.name).description(text(entry.summary));
    for (const { name, description } of entry.arguments) {
      command.addArgument(new Argument(name, description === undefined ? undefined : text(description)));
    }
    for (const spec of entry.options) command.addOption(optionOf(spec, text));
    if (entry.help !== undefined) command.addHelpText('after', text(entry.help));
    const { run } = entry;
    if (run) {
      command.action(async () => {
        const code = await run(ctx, command.processedArgs, command.optsWithGlobals(), program);
        setExitCode(code);
      });
    }
    for (const sub of entry.subcommands) add(command, sub);
  };
  for (const entry of cliCommands) add(program, entry);
  return program;
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
