// What a start opened, to be closed newest first. Each part is registered as it starts, so a start
// that fails at any step (the port in use, say) closes everything it had started, the projector's
// loop, the head probe and the key store included, and the server's close() is the same list.
export class Closers {
  private readonly parts: { readonly name: string; readonly close: () => unknown }[] = [];

  /** Registers what closes `name` (it may return a promise). */
  add(name: string, close: () => unknown): void {
    this.parts.push({ name, close });
  }

  /**
   * Closes every registered part, newest first; one that fails is told to `failed` and the rest
   * still close. Resolves with the first failure (undefined when all closed), for a caller whose
   * own failure does not already say what went wrong.
   */
  async unwind(failed: (name: string, error: unknown) => void): Promise<Error | undefined> {
    let first: Error | undefined;
    for (let part = this.parts.pop(); part !== undefined; part = this.parts.pop()) {
      try {
        await part.close();
      } catch (error) {
        failed(part.name, error);
        first ??= error instanceof Error ? error : new Error(String(error));
      }
    }
    return first;
  }
}
