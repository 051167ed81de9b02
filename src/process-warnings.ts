// Node's process warnings, printed as Node prints them, but for one that says nothing to an
// operator: kafkajs (2.2.4, network/requestQueue) schedules its throttle check with
// `setTimeout(check, throttledUntil - Date.now())`, negative whenever no broker throttles it, and
// Node 24 answers the first negative timer of a process with a TimeoutNegativeWarning on stderr
// (and runs it after 1 ms, as kafkajs means). Every Kafka server and tool printed it at start.
// Only a warning raised from kafkajs' own code is dropped: one from this program's timers is still
// printed (when it comes first: Node raises the warning once a process).

/** The warnings dropped: a negative timeout set inside kafkajs. */
export function isKafkajsNegativeTimeout(warning: Error): boolean {
  return warning.name === 'TimeoutNegativeWarning' && /[\\/]kafkajs[\\/]/.test(warning.stack ?? '');
}

/** Puts a filter before the process's warning listeners (Node's printer among them); once per process. */
export function dropKafkajsNegativeTimeouts(): void {
  const listeners = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (isKafkajsNegativeTimeout(warning)) return;
    for (const listener of listeners) listener(warning);
  });
}
