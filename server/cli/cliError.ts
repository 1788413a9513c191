/** Exit statuses of the meshdeck CLI. */
export const ExitCode = {
  ok: 0,
  /** The mesh has errors (the output was still printed). */
  meshErrors: 1,
  /** The user asked for something that cannot be done: bad command, flag, path or proxy, unreachable proxy. */
  usage: 2,
  /** A bug: an exception nobody expected. */
  internal: 3,
} as const;

/** A user error: printed as `meshdeck: <message>` without a stack trace. */
export class CliError extends Error {
  override readonly name: string = 'CliError';

  constructor(
    message: string,
    readonly exitCode: number = ExitCode.usage,
  ) {
    super(message);
  }
}
