// Who leads a partition, as its other replicas say, before a head read from its leader is believed.
//
// A leader cut off from the other replicas (`make chaos`, leader-isolated) still believes it leads
// until it hears otherwise, and answers with a head that no longer moves while a new leader takes
// writes. So every head read is confirmed: the partition's other replicas are asked, at the same
// time, who leads it, and a head read from a broker too few of them still name is refused (the
// caller answers 503, and the next read, metadata refreshed, asks the leader they name). Sound for
// writes acknowledged before the read began: a new leader acknowledges a write only once
// min.insync.replicas replicas have it, each of which follows it and so names it; of the replicas
// besides the old leader at most replicas - 1 - min.insync.replicas do not, so replicas -
// min.insync.replicas of them (at least one) naming the old leader cannot all be wrong.

/** A head read from a broker that too few of the partition's other replicas still name as its leader. */
export class DeposedLeaderError extends Error {
  constructor(
    readonly partition: number,
    readonly asked: number,
    readonly named: number,
  ) {
    super(
      `partition ${partition}'s head was read from broker ${asked}, but its other replicas name broker ${named} as its leader: the read may be stale`,
    );
    this.name = 'DeposedLeaderError';
  }
}

export interface LeaderToConfirm {
  readonly partition: number;
  /** The broker the head was read from. */
  readonly leader: number;
  /** The partition's replicas (the leader among them). */
  readonly replicas: readonly number[];
  readonly minInsyncReplicas: number;
  /** The leader of the partition as `replica` names it (-1: none). */
  readonly leaderNamedBy: (replica: number) => Promise<number>;
}

/**
 * Resolves once enough of the partition's other replicas name `leader` as its leader (replicas -
 * min.insync.replicas of them, at least one); rejects once too few are left to (DeposedLeaderError
 * when one named another). A replica that names another is not proof on its own: an old leader just
 * back from isolation still names itself for a moment. One replica: nothing to ask.
 */
export function confirmLeader({
  partition,
  leader,
  replicas,
  minInsyncReplicas,
  leaderNamedBy,
}: LeaderToConfirm): Promise<void> {
  const others = replicas.filter((replica) => replica !== leader);
  const needed = Math.min(others.length, Math.max(1, replicas.length - minInsyncReplicas));
  if (needed === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let confirmed = 0;
    let left = others.length;
    let named: number | undefined;
    let lastFailure: unknown;
    const settle = () => {
      left -= 1;
      if (confirmed >= needed) return resolve();
      if (confirmed + left >= needed) return;
      reject(
        named !== undefined
          ? new DeposedLeaderError(partition, leader, named)
          : new Error(`too few replicas of partition ${partition} answered to confirm its leader`, {
              cause: lastFailure,
            }),
      );
    };
    for (const replica of others) {
      leaderNamedBy(replica).then(
        (answer) => {
          if (answer === leader) confirmed += 1;
          else named = answer;
          settle();
        },
        (error: unknown) => {
          lastFailure = error;
          settle();
        },
      );
    }
  });
}
