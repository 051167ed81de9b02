// EncodedEvents: the bytes of an event this process encoded give the event back, so its own
// appends handed back by the log are folded and shown without being parsed; any other buffer, even
// one with the same bytes (a record read back from the log), is not known.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEvent } from '../../projections/codec.js';
import { EncodedEvents } from '../../src/projector/encoded-events.js';
import { created } from '../helpers/events.js';

test('gives back the event of the very bytes it encoded, and nothing for a copy of them', () => {
  const encoded = new EncodedEvents();
  const event = created('42', 'known', 'tag');
  const value = encoded.encode(event);
  assert.equal(decodeEvent(value), { ok: true, event });
  assert.is(encoded.eventOf(value), event);
  assert.is(encoded.eventOf(Buffer.from(value)), undefined);
  assert.is(new EncodedEvents().eventOf(value), undefined, 'each table knows only its own');
});

test.run();
