// The top self-time functions of a V8 .cpuprofile (written by `node --cpu-prof`), so that a bench
// run with BENCH_CPU_PROF set says where the server's time went without opening a profiler UI.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly selfMs: number;
  readonly share: number;
}

export function topSelfTime(file: string, count: number, root = process.cwd()): SelfTime[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nameOf = new Map<number, string>();
  for (const { id, callFrame } of profile.nodes) {
    const where =
      callFrame.url === ''
        ? ''
        : ` ${relative(root, callFrame.url.replace(/^file:\/\//, ''))}:${callFrame.lineNumber + 1}`;
    nameOf.set(id, `${callFrame.functionName === '' ? '(anonymous)' : callFrame.functionName}${where}`);
  }
  // A sample's time is the delta to the next sample.
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((nodeId, index) => {
    const deltaUs = profile.timeDeltas[index + 1] ?? 0;
    const name = nameOf.get(nodeId) ?? '?';
    selfUs.set(name, (selfUs.get(name) ?? 0) + deltaUs);
    totalUs += deltaUs;
  });
  return [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: us / 1000, share: totalUs === 0 ? 0 : us / totalUs }));
}
