/**
 * How a command of `opflow` is described: its name, summary, arguments, options (with their
 * defaults and choices), the help text after them, and a handler. The types of the handler's
 * arguments and options are derived from the same flag strings commander parses, so a handler
 * whose command function expects an option the command does not declare fails to compile; the
 * values commander hands over are checked against the description before the handler sees them.
 *
 * Flags are long ones only (`--name`, `--name <value>`, `--no-name`); shared/cli/program.ts turns
 * the descriptions into the commander program.
 */
import type { Command } from 'commander';
import type { CliContext } from './context';
import type { ExitCodeValue } from './exit-codes';

/** A help text; a function of the workflows' names where it lists them (known only at start-up). */
export type HelpText = string | ((workflowNames: readonly string[]) => string);

export interface OptionSpec {
  /** As commander takes them: `--json`, `--no-wait`, `--select <mode>`, `--query <name=value>`. */
  readonly flags: string;
  readonly description: HelpText;
  /** Given when the option is not: the handler then always has a value. */
  readonly default?: string;
  /** The only values accepted (commander refuses others, naming them). */
  readonly choices?: readonly string[];
  /** The command is refused without it. */
  readonly required?: boolean;
  /** May be given more than once; the handler gets every value, in order (none: `[]`). */
  readonly repeatable?: boolean;
}

export interface ArgumentSpec {
  /** As commander takes them: `<required>`, `[optional]`, `<many...>`, `[many...]`. */
  readonly name: string;
  readonly description?: HelpText;
}

type Camel<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;
type LongName<Flags extends string> = Flags extends `--${infer Rest}`
  ? Rest extends `${infer Name} ${string}`
    ? Name
    : Rest
  : never;
/** The property an option's value is under: `--base-url` is `baseUrl`, `--no-wait` is `wait`. */
export type OptionKey<Flags extends string> =
  LongName<Flags> extends `no-${infer Name}` ? Camel<Name> : Camel<LongName<Flags>>;
type AlwaysGiven<S extends OptionSpec> = S extends { default: string } | { required: true } ? true : false;
type ValueOf<S extends OptionSpec> =
  | (S extends { choices: readonly (infer Choice)[] } ? Choice : string)
  | (AlwaysGiven<S> extends true ? never : undefined);
type OptionValue<S extends OptionSpec> =
  LongName<S['flags']> extends `no-${string}`
    ? boolean
    : S['flags'] extends `${string} <${string}>` | `${string} [${string}]`
      ? S extends { repeatable: true }
        ? string[]
        : ValueOf<S>
      : boolean | undefined;

/** The options a list of option descriptions gives a handler, typed. */
export type OptionsOf<Specs extends readonly OptionSpec[]> = {
  [S in Specs[number] as OptionKey<S['flags']>]: OptionValue<S>;
};

type ArgumentValue<Name extends string> = Name extends `${string}...${string}`
  ? string[]
  : Name extends `<${string}>`
    ? string
    : string | undefined;

/** The arguments a list of argument descriptions gives a handler, in order, typed. */
export type ArgumentsOf<Specs extends readonly ArgumentSpec[]> = {
  readonly [K in keyof Specs]: Specs[K] extends ArgumentSpec ? ArgumentValue<Specs[K]['name']> : never;
};

/** What a handler is called with. */
export interface Invocation<Args, Options> {
  ctx: CliContext;
  args: Args;
  options: Options;
  /** The whole program (for `opflow help`). */
  program: Command;
}

/** A command as the program builder sees it: descriptions, and a handler taking commander's values. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: HelpText;
  readonly arguments: readonly ArgumentSpec[];
  readonly options: readonly OptionSpec[];
  /** Shown after the options in `opflow <command> --help`. */
  readonly help?: HelpText | undefined;
  /**
   * The page that describes it, from the repository's root with the heading's anchor
   * (`docs/guides/cli-jobs.md#running-a-workflow`): named last in its `--help` and `opflow help`.
   * A subcommand without its own names its group's.
   */
  readonly docs?: string | undefined;
  readonly subcommands: readonly CommandEntry[];
  /** Absent for a group (`opflow callbacks`): commander then shows the group's help. */
  readonly run?:
    | ((
        ctx: CliContext,
        args: readonly unknown[],
        options: object,
        program: Command,
      ) => Promise<ExitCodeValue>)
    | undefined;
}

export interface CommandSpec<
  Globals extends readonly OptionSpec[],
  Args extends readonly ArgumentSpec[],
  Options extends readonly OptionSpec[],
> {
  name: string;
  summary: HelpText;
  arguments?: Args;
  options?: Options;
  help?: HelpText;
  docs?: string;
  subcommands?: readonly CommandEntry[];
  run?: (
    invocation: Invocation<ArgumentsOf<Args>, OptionsOf<Globals> & OptionsOf<Options>>,
  ) => Promise<ExitCodeValue>;
}

/**
 * The `defineCommand` of a program with these global options (accepted before or after any
 * command's name): its handlers get the global options' values beside their own.
 */
export function commandDefiner<const Globals extends readonly OptionSpec[]>(globals: Globals) {
  return function defineCommand<
    const Args extends readonly ArgumentSpec[] = readonly [],
    const Options extends readonly OptionSpec[] = readonly [],
  >(spec: CommandSpec<Globals, Args, Options>): CommandEntry {
    const argumentSpecs: Args | readonly [] = spec.arguments ?? [];
    const optionSpecs: Options | readonly [] = spec.options ?? [];
    const { run } = spec;
    return {
      name: spec.name,
      summary: spec.summary,
      arguments: argumentSpecs,
      options: optionSpecs,
      help: spec.help,
      docs: spec.docs,
      subcommands: spec.subcommands ?? [],
      run:
        run &&
        (async (ctx, args, options, program) => {
          if (!matchesArguments<Args>(argumentSpecs, args)) throw mismatch(spec.name, 'arguments', args);
          if (!(matchesOptions<Globals>(globals, options) && matchesOptions<Options>(optionSpecs, options)))
            throw mismatch(spec.name, 'options', options);
          return run({ ctx, args, options, program });
        }),
    };
  };
}

function mismatch(command: string, what: string, values: unknown): Error {
  return new Error(
    `opflow ${command}: the parsed ${what} do not match its description: ${JSON.stringify(values)}`,
  );
}

/** The property commander keeps an option's value under (its long name in camel case, without `no-`). */
export function optionKey(flags: string): string {
  const long = /--(?:no-)?([a-z0-9-]+)/i.exec(flags)?.[1] ?? flags;
  return long.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Whether commander's arguments are what the descriptions say, in number and kind. */
function matchesArguments<const Args extends readonly ArgumentSpec[]>(
  specs: Args | readonly [],
  values: readonly unknown[],
): values is ArgumentsOf<Args> {
  if (values.length !== specs.length) return false;
  return specs.every(({ name }, index) => {
    const value = values[index];
    if (name.includes('...')) return isStringList(value);
    return typeof value === 'string' || (name.startsWith('[') && value === undefined);
  });
}

/** Whether commander's option values are what the descriptions say (kind, choices, presence). */
function matchesOptions<const Specs extends readonly OptionSpec[]>(
  specs: Specs | readonly [],
  values: object,
): values is OptionsOf<Specs> {
  const given = new Map(Object.entries(values));
  return specs.every((spec) => {
    const value = given.get(optionKey(spec.flags));
    if (spec.flags.startsWith('--no-')) return typeof value === 'boolean';
    if (!/[<[]/.test(spec.flags)) return value === undefined || typeof value === 'boolean';
    if (spec.repeatable) return isStringList(value);
    if (value === undefined) return spec.default === undefined && !spec.required;
    return typeof value === 'string' && (spec.choices === undefined || spec.choices.includes(value));
  });
}
