// Gives one broker its block of producer ids by asking it for one producer id (InitProducerId
// without a transactional id, which the broker that receives it answers from its own block).
// Under KRaft a broker fetches that block from the active controller the first time it is asked:
// while the active controller is paused it cannot, and an idempotent producer started then does
// not start. Asked once per broker when the cluster comes up (and after a restart), every later
// producer start is served locally. The request goes straight to the broker on a socket because
// a client library sends InitProducerId to a broker of its own choosing.
import { connect } from 'node:net';

const INIT_PRODUCER_ID = 22;
/** v1: the last version before flexible encoding; kafkajs uses it too, so the broker serves it. */
const VERSION = 1;
const CLIENT_ID = Buffer.from('kafka-cluster-warm-up');

export type InitProducerIdAnswer = { readonly errorCode: number; readonly producerId: bigint };

function request(): Buffer {
  const header = Buffer.alloc(10);
  header.writeInt16BE(INIT_PRODUCER_ID, 0);
  header.writeInt16BE(VERSION, 2);
  header.writeInt32BE(1, 4); // correlation id: one request per connection
  header.writeInt16BE(CLIENT_ID.length, 8);
  const body = Buffer.alloc(6);
  body.writeInt16BE(-1, 0); // transactional id: null
  body.writeInt32BE(60_000, 2); // transaction timeout (unused without a transactional id)
  const payload = Buffer.concat([header, CLIENT_ID, body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length, 0);
  return Buffer.concat([size, payload]);
}

/** One InitProducerId round trip to `address` (host:port); rejects on a socket error or after `timeoutMs`. */
export function initProducerId(address: string, timeoutMs: number): Promise<InitProducerIdAnswer> {
  const [host = '127.0.0.1', port = '0'] = address.split(':');
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port) });
    let received = Buffer.alloc(0);
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`no InitProducerId answer from ${address} within ${timeoutMs} ms`)),
    );
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`${address} closed the connection before answering InitProducerId`)));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return;
      // size, correlation id, throttle time, error code, producer id, epoch
      resolve({ errorCode: received.readInt16BE(12), producerId: received.readBigInt64BE(14) });
      socket.destroy();
    });
    socket.write(request());
  });
}

/** Asks `address` until it hands out a producer id (it answers a retriable error while it loads). */
export async function warmProducerIds(address: string, timeoutMs = 30_000): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no attempt';
  while (Date.now() < deadline) {
    try {
      const answer = await initProducerId(address, Math.max(500, Math.min(5000, deadline - Date.now())));
      if (answer.errorCode === 0) return answer.producerId;
      last = `error code ${answer.errorCode}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`broker ${address} gave no producer id within ${timeoutMs} ms (${last})`);
}
