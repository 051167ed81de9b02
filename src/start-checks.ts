// What the configuration names but only the machine can confirm: the data directory can be made
// and used, the host name resolves, the address can be listened on (a listen on it, closed at
// once). A failure is a bad setting (one line naming the variable, exit code 2), found before the
// start does anything else: nothing is opened, replayed or written before these checks pass.
import { lookup } from 'node:dns/promises';
import { access, constants } from 'node:fs/promises';
import { createServer, isIP } from 'node:net';
import { settingError, type Config } from './config.js';
import { ensurePrivateDir, foreignOwner } from './data-dir/data-dir.js';

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Throws a ConfigError naming REPORTS_DATA_DIR when this process is not the user who writes in the
 * data directory (data-dir.ts, foreignOwner): the server and the tools that write there refuse to run.
 */
export async function checkDataDirUser(dataDir: string): Promise<void> {
  const foreign = await foreignOwner(dataDir);
  if (foreign === undefined) return;
  const { uid, owner, of } = foreign;
  throw settingError(
    'dataDir',
    `${dataDir} is written by user ${owner} (the owner of ${of}) and this process runs as user ${uid}: what it made there would be user ${uid}'s alone and unreadable to the service; run it as user ${owner} (sudo -u '#${owner}' ...)`,
  );
}

/** Throws a ConfigError naming REPORTS_DATA_DIR, HOST or PORT when it cannot be used. */
export async function checkStartSettings({
  dataDir,
  host,
  port,
}: Pick<Config, 'dataDir' | 'host' | 'port'>): Promise<void> {
  await checkDataDirUser(dataDir);
  try {
    await ensurePrivateDir(dataDir);
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw settingError('dataDir', `cannot use ${dataDir} as the data directory: ${reasonOf(error)}`);
  }
  if (isIP(host) === 0) {
    await lookup(host).catch((error: NodeJS.ErrnoException) => {
      throw settingError('host', `cannot resolve "${host}" (${error.code ?? reasonOf(error)})`);
    });
  }
  await checkListen(host, port);
}

/** Listens on host:port and closes at once: a port in use (or an address not this machine's) is found before the start opens anything. */
function checkListen(host: string, port: number): Promise<void> {
  const probe = createServer();
  return new Promise((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, { host, port })));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The error of a failed listen: a ConfigError naming HOST or PORT when the address is what is wrong. */
export function listenError(error: NodeJS.ErrnoException, { host, port }: Pick<Config, 'host' | 'port'>): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return settingError('port', `port ${port} on ${host} is in use`);
    case 'EACCES':
      return settingError('port', `this process may not listen on port ${port} of ${host}`);
    case 'EADDRNOTAVAIL':
      return settingError('host', `${host} is not an address of this machine`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return settingError('host', `cannot resolve "${host}" (${error.code})`);
    default:
      return error;
  }
}
