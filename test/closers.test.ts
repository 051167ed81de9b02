// What a start opened is closed newest first, every part whatever another's close does, and the
// first failure is handed back once all are closed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Closers } from '../src/closers.js';

const closers = suite('Closers');

closers(
  'closes every part newest first, tells each failure, and resolves with the first once all are closed',
  async () => {
    const order: string[] = [];
    const told: string[] = [];
    const parts = new Closers();
    parts.add('log', () => void order.push('log'));
    parts.add('keys', () => {
      order.push('keys');
      throw new Error('keys would not close');
    });
    parts.add('projector', async () => {
      await Promise.resolve();
      order.push('projector');
    });
    parts.add('server', () => Promise.reject(new Error('server would not close')));
    const first = await parts.unwind((name) => told.push(name));
    assert.equal(order, ['projector', 'keys', 'log']);
    assert.equal(told, ['server', 'keys']);
    assert.is(first?.message, 'server would not close');
    assert.is(await parts.unwind(() => undefined), undefined, 'nothing is closed twice');
    assert.equal(order, ['projector', 'keys', 'log']);
  },
);

closers.run();
