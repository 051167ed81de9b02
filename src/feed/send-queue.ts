// How many bytes the kernel still holds for a TCP connection that its peer has not acknowledged:
// Linux's `tx_queue` in /proc/net/tcp and /proc/net/tcp6 (for an established connection, the bytes
// written and not yet acked). What the peer's kernel has acknowledged is the client's; what is
// still queued here is the server's, and a feed whose connection still holds a deleted report's
// opened content is cut off (feed.ts `erased`). Where the table cannot be read (another system),
// the answer is undefined, and the caller assumes the worst.
import { readFileSync } from 'node:fs';

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/** The two ends of a connection, as a socket names them. */
export interface Ends {
  readonly localPort: number;
  readonly remotePort: number;
}

/**
 * tx_queue of the rows of `table` (the text of /proc/net/tcp or tcp6) whose local and remote ports
 * are `ends`' (the largest, should two rows share both ports); undefined when no row does.
 */
export function sendQueueIn(table: string, { localPort, remotePort }: Ends): number | undefined {
  return sendQueuesIn([table]).get(`${localPort}:${remotePort}`);
}

function portOf(address: string): number {
  return Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
}

/** The bytes queued unacknowledged for a connection, as the kernel's tables say at one moment. */
export interface KernelSendQueues {
  /** Undefined when it cannot tell. */
  queued(ends: Ends): number | undefined;
}

/** What the feeds ask of the kernel. */
export interface FeedKernel {
  /** The most a connection's send queue can hold (tcp_wmem's maximum; 64 MiB when unknown). */
  readonly most: number;
  /** The send queues now: the tables are read at the first question asked of it, and only then. */
  sendQueues(): KernelSendQueues;
}

const UNKNOWN_MOST = 64 * 1024 * 1024;

/** The largest send buffer TCP autotuning gives a socket: the third field of tcp_wmem. */
export function mostInSendQueue(text: string | undefined): number {
  const most = Number(text?.trim().split(/\s+/)[2]);
  return Number.isInteger(most) && most > 0 ? most : UNKNOWN_MOST;
}

type ReadText = (path: string) => string;

const readText: ReadText = (path) => readFileSync(path, 'utf8');

function attempt(read: ReadText, path: string): string | undefined {
  try {
    return read(path);
  } catch {
    return undefined;
  }
}

/** Linux's (tcp_wmem read once, here). */
export function systemKernel(read: ReadText = readText): FeedKernel {
  return {
    most: mostInSendQueue(attempt(read, '/proc/sys/net/ipv4/tcp_wmem')),
    sendQueues: () => kernelSendQueues(read),
  };
}

/** The kernel's send queues at one moment (an erasure asks about every feed that showed its key at once). */
export function kernelSendQueues(read: ReadText = readText): KernelSendQueues {
  // Parsed once, then a lookup per connection: scanned for each feed asked about, a host's few
  // thousand rows cost a delete 0.25-0.77 s of the event loop beside a hundred feeds.
  let queues: Map<string, number> | undefined;
  return {
    queued({ localPort, remotePort }) {
      queues ??= sendQueuesIn(TABLES.flatMap((path) => attempt(read, path) ?? []));
      return queues.get(`${localPort}:${remotePort}`);
    },
  };
}

/** tx_queue of every row of `tables` by "localPort:remotePort" (the largest, should two rows share both ports). */
export function sendQueuesIn(tables: readonly string[]): Map<string, number> {
  const queues = new Map<string, number>();
  // "  sl  local_address rem_address   st tx_queue:rx_queue ...", addresses as HEXADDR:HEXPORT.
  for (const table of tables)
    for (const line of table.split('\n')) {
      const [local, remote, , queue] = line.trim().split(/\s+/).slice(1, 5);
      if (local === undefined || remote === undefined || queue === undefined) continue;
      const txQueue = Number.parseInt(queue.split(':')[0] ?? '', 16);
      if (!Number.isInteger(txQueue)) continue;
      const ends = `${portOf(local)}:${portOf(remote)}`;
      queues.set(ends, Math.max(queues.get(ends) ?? 0, txQueue));
    }
  return queues;
}
