// The process the key store's crash test kills: it puts and destroys keys from many writers at once,
// for ever, and prints a line as each write starts or resolves. A write to a pipe is synchronous
// only while the pipe has room: when the test reads slowly, lines wait in this process and die
// with it. So a destroy starts only once its "destroying" line is in the pipe (its write called
// back); a lost "put" or "destroyed" line only leaves the test knowing less, never wrong.
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
/** `say`, resolved once the line is in the pipe. */
const sayNow = (line: string) =>
  new Promise<void>((resolve, reject) =>
    process.stdout.write(`${line}\n`, (error) => (error ? reject(error) : resolve())),
  );

await Promise.all(
  Array.from({ length: WRITERS }, async () => {
    for (let round = 0; ; round += 1) {
      // Random digests: one equal to another key's would stay in the file when this key is destroyed.
      const key = store.mint(randomBytes(32));
      const id = keyIdText(key.id);
      await store.put([key]);
      say(`put ${id} ${key.secret.toString('hex')} ${key.contentDigest.toString('hex')}`);
      if (round % 2 === 0) continue;
      await sayNow(`destroying ${id}`);
      await store.destroy([key.id]);
      say(`destroyed ${id}`);
    }
  }),
);
