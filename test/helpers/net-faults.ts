// Network faults on loopback with nftables (Debian's `nftables`; this kernel has no netem): packets
// dropped on the output hook of a table of the suite's own, `inet reports_chaos`, by destination
// port (a broker's), by the sending user (`meta skuid`: an instance run as a user of its own can be
// cut off alone), or at random (`numgen random`: loss). The table is removed when the faults end,
// when the process exits however it exits, and before it is created (what a killed run left).
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const TABLE = ['inet', 'reports_chaos'] as const;

/** Whether nft is installed and may change the ruleset (root). */
export function nftAvailable(): boolean {
  try {
    execFileSync('nft', ['list', 'tables'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function removeTableNow(): void {
  try {
    execFileSync('nft', ['delete', 'table', ...TABLE], { stdio: 'ignore' });
  } catch {
    // Not there: nothing to remove.
  }
}

export interface NetFaults {
  /** Drops every packet sent to one of `ports` (`uid`: only those its processes send); returns the rule's handle. */
  cut(ports: readonly number[], uid?: number): Promise<number>;
  /** Drops `percent` % of the packets sent to `ports`, at random. */
  lose(ports: readonly number[], percent: number): Promise<number>;
  /** Removes one rule. */
  remove(handle: number): Promise<void>;
  /** Removes every rule (the network is whole again). */
  heal(): Promise<void>;
  /** Removes the table. */
  close(): Promise<void>;
}

async function addRule(rule: readonly string[]): Promise<number> {
  const { stdout } = await run('nft', ['--echo', '--handle', 'add', 'rule', ...TABLE, 'out', ...rule]);
  const handle = /# handle (\d+)/.exec(stdout)?.[1];
  if (handle === undefined) throw new Error(`nft did not give the handle of rule ${rule.join(' ')}: ${stdout}`);
  return Number(handle);
}

const portSet = (ports: readonly number[]) => ['{', ports.join(', '), '}'];

export async function openNetFaults(): Promise<NetFaults> {
  if (!nftAvailable())
    throw new Error(
      'nft is not installed or not allowed here (apt-get install nftables; run as root): the network fault scenarios need it',
    );
  // A table a killed run left would go on dropping packets: gone first.
  removeTableNow();
  await run('nft', ['add', 'table', ...TABLE]);
  await run('nft', ['add', 'chain', ...TABLE, 'out', '{ type filter hook output priority 0; policy accept; }']);
  process.once('exit', removeTableNow);
  return {
    cut: (ports, uid) =>
      addRule([
        ...(uid === undefined ? [] : ['meta', 'skuid', String(uid)]),
        'tcp',
        'dport',
        ...portSet(ports),
        'drop',
      ]),
    lose: (ports, percent) =>
      addRule(['tcp', 'dport', ...portSet(ports), 'numgen', 'random', 'mod', '100', '<', String(percent), 'drop']),
    remove: async (handle) => {
      await run('nft', ['delete', 'rule', ...TABLE, 'out', 'handle', String(handle)]);
    },
    heal: async () => {
      await run('nft', ['flush', 'chain', ...TABLE, 'out']);
    },
    close: async () => {
      process.off('exit', removeTableNow);
      removeTableNow();
      await Promise.resolve();
    },
  };
}
