import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createShedWarning } from '../../src/http/shed-warning.js';
import { until } from '../helpers/async.js';
import { memoryLogger } from '../helpers/server.js';

const warning = suite('createShedWarning');

warning('logs the first shed at once and the rest of the interval as one line with their count', async () => {
  const { logger, lines } = memoryLogger();
  const shed = createShedWarning(logger, 3, 50);
  for (let i = 0; i < 10; i++) shed.shed(3);
  assert.is(lines().length, 1);
  await until(() => lines().length === 2, 'the line that ends the interval');
  assert.is(lines()[1]?.['shed'], 9);
  shed.stop();
});

warning('writes nothing when an interval ends without another shed, and logs the next shed at once', async () => {
  const { logger, lines } = memoryLogger();
  const shed = createShedWarning(logger, 3, 20);
  shed.shed(3);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.is(lines().length, 1);
  shed.shed(3);
  assert.is(lines().length, 2);
  assert.is(lines()[1]?.['open'], 3);
  shed.stop();
});

warning('stop drops what was counted: nothing is logged after it', async () => {
  const { logger, lines } = memoryLogger();
  const shed = createShedWarning(logger, 3, 20);
  shed.shed(3);
  shed.shed(3);
  shed.stop();
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.is(lines().length, 1);
});

warning.run();
