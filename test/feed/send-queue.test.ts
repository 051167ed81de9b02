import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mostInSendQueue, sendQueueIn, systemKernel } from '../../src/feed/send-queue.js';

// Two rows of /proc/net/tcp as Linux writes them: 127.0.0.1:8080 (1F90) to 127.0.0.1:51234 (C822)
// with 0x2A10 bytes unacknowledged, and the listening socket.
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C822 01 00002A10:00000000 01:00000014 00000000     0        0 2 1 0 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:C823 01 00000400:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1
`;

const test = suite('the kernel send queue of a connection');

test('is the tx_queue of the row with both ports, in IPv4 and IPv6 tables', () => {
  assert.is(sendQueueIn(TCP, { localPort: 8080, remotePort: 51234 }), 0x2a10);
  assert.is(sendQueueIn(TCP6, { localPort: 8080, remotePort: 51235 }), 0x400);
  assert.is(sendQueueIn(TCP, { localPort: 8080, remotePort: 51235 }), undefined);
  assert.is(sendQueueIn('', { localPort: 8080, remotePort: 51234 }), undefined);
});

test('reads tcp_wmem once, and the tables once per moment, only when asked; undefined where none can be read', () => {
  const reads: string[] = [];
  const kernel = systemKernel((path) => {
    reads.push(path);
    if (path.endsWith('tcp_wmem')) return '4096\t16384\t4194304\n';
    return path.endsWith('6') ? TCP6 : TCP;
  });
  assert.is(kernel.most, 4194304);
  const queues = kernel.sendQueues();
  assert.equal(reads, ['/proc/sys/net/ipv4/tcp_wmem'], 'the tables are read only when asked');
  assert.is(queues.queued({ localPort: 8080, remotePort: 51234 }), 0x2a10);
  assert.is(queues.queued({ localPort: 8080, remotePort: 51235 }), 0x400);
  assert.equal(reads, ['/proc/sys/net/ipv4/tcp_wmem', '/proc/net/tcp', '/proc/net/tcp6']);
  const none = systemKernel(() => {
    throw new Error('ENOENT');
  });
  assert.is(none.sendQueues().queued({ localPort: 8080, remotePort: 51234 }), undefined);
  assert.is(none.most, 64 * 1024 * 1024);
  assert.is(mostInSendQueue('4096 16384'), 64 * 1024 * 1024);
});

test.run();
