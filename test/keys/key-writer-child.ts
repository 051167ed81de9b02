// The process the key store's crash test kills: it puts and destroys keys from many writers at once,
// for ever, and prints a line as each write starts or resolves. Lines to a pipe are written
// synchronously on Linux, so a line printed before the kill reaches the test.
//   put <id> <secret hex> <digest hex>   the put resolved
//   destroying <id>                      a destroy is about to start
//   destroyed <id>                       the destroy resolved
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { keyIdText } from '../../src/keys/key-store.js';

const WRITERS = 16;
const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: key-writer-child.js DIR');
const store = await openFileKeyStore({ dir, logger: pino({ level: 'warn' }, pino.destination(2)), create: true });
const say = (line: string) => process.stdout.write(`${line}\n`);

await Promise.all(
  Array.from({ length: WRITERS }, async () => {
    for (let round = 0; ; round += 1) {
      // Random digests: one equal to another key's would stay in the file when this key is destroyed.
      const key = store.mint(randomBytes(32));
      const id = keyIdText(key.id);
      await store.put([key]);
      say(`put ${id} ${key.secret.toString('hex')} ${key.contentDigest.toString('hex')}`);
      if (round % 2 === 0) continue;
      say(`destroying ${id}`);
      await store.destroy([key.id]);
      say(`destroyed ${id}`);
    }
  }),
);
