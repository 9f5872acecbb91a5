/**
 * The error every runtime (local and aws) throws for a wrong setting, so the CLI reports it the same way.
 */

/** A configuration value that is wrong, named by the flag or variable it came from. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** Whether a command-line flag (rather than the environment) holds a wrong value. */
    readonly fromFlags: boolean,
  ) {
    super(message);
  }
}
