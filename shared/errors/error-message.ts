/**
 * The text of a caught value, for log lines and refusals. `catch` hands over `unknown`: an Error
 * gives its message, anything else (a thrown string, a rejected number) its `String()` form, so a
 * message is never `undefined`.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `name: message` for an Error (`TypeError: x is not a function`), `String()` for anything else:
 * for log lines about failures nobody expected, where the error's class is the first clue.
 */
export function namedErrorMessage(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
