// How long a Kafka client's disconnect may take before it is abandoned: at a shutdown, or when a
// producer is replaced, the broker it talks to may be gone (settle-within.ts does the waiting).

/** Milliseconds a disconnect gets before it is abandoned. */
export const DISCONNECT_MS = 2000;
