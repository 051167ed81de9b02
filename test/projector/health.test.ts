// The projection's stall detection goes by a monotonic clock and only the lag's age by the wall
// clock: a wall clock stepped an hour either way (NTP, an operator) must not declare a stall that
// is not there (a /readyz 503 for nothing), nor hide one that is.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ProjectionHealth } from '../../src/projector/health.js';

const STALL_MS = 10_000;
const HOUR_MS = 3_600_000;

function clocks() {
  const state = { monotonic: 1_000, wall: Date.parse('2026-11-27T00:00:00Z') };
  const health = new ProjectionHealth(
    STALL_MS,
    () => state.monotonic,
    () => state.wall,
  );
  const advance = (ms: number) => {
    state.monotonic += ms;
    state.wall += ms;
  };
  return { state, health, advance };
}

const head = (records: number) => new Map([[0, records]]);

const stall = suite('ProjectionHealth: stalls on the monotonic clock');

stall('declares a stall once records have waited longer than the limit with nothing applied', () => {
  const { health, advance } = clocks();
  health.observedHead(head(0), head(5));
  advance(STALL_MS - 1);
  assert.is(health.verdict().stalled, false);
  advance(2);
  assert.is(health.verdict().stalled, true);
});

stall('a wall clock stepped forward an hour while records wait is not a stall', () => {
  const { state, health, advance } = clocks();
  health.observedHead(head(0), head(5));
  state.wall += HOUR_MS;
  advance(1_000);
  assert.is(health.verdict().stalled, false);
});

stall('a wall clock stepped back an hour does not hide a stall', () => {
  const { state, health, advance } = clocks();
  health.observedHead(head(0), head(5));
  state.wall -= HOUR_MS;
  advance(STALL_MS + 1);
  assert.is(health.verdict().stalled, true);
});

stall('the lag in seconds is the wall-clock age of the newest applied record', () => {
  const { state, health, advance } = clocks();
  health.applied(state.wall);
  health.observedHead(head(1), head(3));
  advance(4_000);
  assert.is(health.verdict().lagSeconds, 4);
  // The records carry the wall clock's time: a step of the wall clock shows in their age, and is never negative.
  state.wall -= HOUR_MS;
  assert.is(health.verdict().lagSeconds, 0);
});

stall.run();
