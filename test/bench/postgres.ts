// A throw-away PostgreSQL server for the Koa + PostgreSQL baseline of `make bench`, in a temporary
// directory of its own (initdb + pg_ctl from Debian's `postgresql` package). Configured as a user
// who cares about performance would, without giving up durability:
// - fsync and synchronous_commit on (the defaults): a 200 means the row is on disk, as the service's;
// - shared_buffers 256MB (the whole bench table fits) and max_wal_size 4GB, so no checkpoint lands
//   in a 10 s run; wal_compression off and full_page_writes on (the defaults);
// - a unix socket only (listen_addresses ''), the fastest local transport the `pg` driver has;
// - no statement or connection logging; initdb --no-sync only skips syncing the empty cluster it creates.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childPids } from './cpu-time.js';

export interface Postgres {
  /** The directory holding the unix socket: PGHOST for the driver. */
  readonly socketDir: string;
  readonly port: number;
  readonly user: string;
  /** The postmaster and its children (backends, WAL writer, checkpointer…), for the CPU count. */
  pids(): number[];
  stop(): void;
}

const SETTINGS = [
  'listen_addresses=',
  'max_connections=40',
  'shared_buffers=256MB',
  'max_wal_size=4GB',
  'synchronous_commit=on',
  'fsync=on',
  'log_min_messages=warning',
];

/** The directory of initdb and pg_ctl: on the PATH, else the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBin(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  return versions
    .map((version) => join(root, version, 'bin'))
    .find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')));
}

/**
 * initdb refuses to run as root: as root, the cluster belongs to the `postgres` user that Debian's
 * package creates, and the commands run through runuser.
 */
function runAs(): { prefix: string[]; user: string; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { prefix: [], user: process.env['USER'] ?? 'postgres' };
  const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (ids.status !== 0) throw new Error('running as root and there is no "postgres" user to own the bench cluster');
  return {
    prefix: ['runuser', '-u', 'postgres', '--'],
    user: 'postgres',
    uid: Number(ids.stdout),
    gid: Number(gids.stdout),
  };
}

export function startPostgres(bin: string, dir: string, port: number): Postgres {
  const owner = runAs();
  if (owner.uid !== undefined && owner.gid !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const run = (program: string, args: string[]) => {
    const [command = program, ...rest] = [...owner.prefix, join(bin, program), ...args];
    execFileSync(command, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  run('initdb', ['-D', data, '-U', owner.user, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    ...SETTINGS.map((setting) => `-c ${setting.endsWith('=') ? `${setting}''` : setting}`),
  ].join(' ');
  run('pg_ctl', ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'postgres.log'), '-o', options]);
  return {
    socketDir: dir,
    port,
    user: owner.user,
    pids: () => {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return [postmaster, ...childPids(postmaster)];
    },
    stop: () => run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data]),
  };
}
