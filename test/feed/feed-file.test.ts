// GET /events on the embedded file log (the cases: feed-cases.ts).
import { startTestServer } from '../helpers/server.js';
import { feedCases } from './feed-cases.js';

feedCases({
  name: 'file log',
  start: (env = {}) => startTestServer(env),
  toolEnv: (server) => ({ REPORTS_DATA_DIR: server.dataDir }),
});
