// The one error a bad setting raises, whether found while parsing or later, at start.
export class ConfigError extends Error {
  /** `reason` without the variable's name, for messages that name the setting another way (a flag). */
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}
