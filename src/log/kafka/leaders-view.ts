// Which broker leads each partition of the topic, and its replicas, for the head reads
// (partition-heads.ts): asked of every broker hosting the topic at once, and taken from what most of
// those that answer say.
//
// kafkajs refreshes its own view through one broker it picks at random, and one refresh at a time
// for the whole cluster: a refresh that picked a paused broker held every later one for the client's
// request time-out (10 s). An instance that wrote nothing kept asking the paused broker for the head
// of a partition that had a new leader, and its /readyz said 503 until 9 s after the election (the
// short fault suite, once in some twenty pauses). Here a broker that has not answered is not asked
// again until it does, and does not hold the others' answers. Taking what most brokers say, not the
// first answer, keeps a leader cut off from the others (which still believes it leads) out of the
// view as soon as the others have elected another.
import type { Broker, BrokerMetadata, Cluster, PartitionMetadata } from 'kafkajs';

export interface PartitionPlace {
  /** The leader's node id (-1: none). */
  readonly leader: number;
  readonly replicas: readonly number[];
}

export type Places = ReadonlyMap<number, PartitionPlace>;

export interface LeadersViewOptions {
  readonly topic: string;
  /** How old the view may be before a read refreshes it (in the background once one is known). */
  readonly maxAgeMs: number;
  /** How long, after the first broker answered, the others' answers are waited for. */
  readonly answersWindowMs: number;
  /** How soon after a refresh began a failed read may ask for another. */
  readonly minSpacingMs: number;
}

/** How old the view may be before a read refreshes it: as kafkajs' metadataMaxAge for these clusters (group-free-cluster.ts). */
const MAX_AGE_MS = 1000;
/** How long a refresh waits, after the first broker's answer, for the others'. */
const ANSWERS_WINDOW_MS = 200;
/** A failed read asks for a refresh at once, but not sooner than this after the last one began. */
const MIN_SPACING_MS = 100;

/** The view the head reads and the fetch loops of a topic keep. */
export function leadersViewOf(topic: string): LeadersView {
  return new LeadersView({
    topic,
    maxAgeMs: MAX_AGE_MS,
    answersWindowMs: ANSWERS_WINDOW_MS,
    minSpacingMs: MIN_SPACING_MS,
  });
}

export class LeadersView {
  private places: Places = new Map();
  /** When the last refresh began, answered or not (monotonic, performance.now()): refreshes are spaced by it. */
  private askedMs = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  /** Brokers asked and not answered yet: not asked again meanwhile. */
  private readonly asking = new Set<number>();
  private closed = false;

  constructor(private readonly options: LeadersViewOptions) {}

  /** The view as last refreshed (empty until the first), refreshing it in the background when old. */
  known(cluster: Cluster): Places {
    if (performance.now() - this.askedMs >= this.options.maxAgeMs) this.refresh(cluster).catch(() => undefined);
    return this.places;
  }

  /** The view; waits for a refresh only while none is known. */
  async current(cluster: Cluster): Promise<Places> {
    if (this.places.size === 0) await this.refresh(cluster);
    return this.known(cluster);
  }

  /**
   * A read through the view failed (a leader may have moved): refreshes it, and resolves once done.
   * Reads failing fast do not ask the brokers faster than one refresh per `minSpacingMs`.
   */
  async outdated(cluster: Cluster): Promise<void> {
    if (this.refreshing === undefined && performance.now() - this.askedMs < this.options.minSpacingMs) return;
    await this.refresh(cluster);
  }

  /** No refresh from now on (the cluster is being disconnected). */
  close(): void {
    this.closed = true;
  }

  /** One refresh at a time; it waits on no broker that has not answered an earlier one. */
  private refresh(cluster: Cluster): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the view of ${this.options.topic}'s leaders is closed`));
    if (this.refreshing === undefined) {
      this.askedMs = performance.now();
      this.refreshing = this.ask(cluster).finally(() => (this.refreshing = undefined));
    }
    return this.refreshing;
  }

  private async ask(cluster: Cluster): Promise<void> {
    const { topic, answersWindowMs } = this.options;
    const nodes = await this.nodesToAsk(cluster);
    const answers: Places[] = [];
    const asked = nodes
      .filter((node) => !this.asking.has(node))
      .map(async (node) => {
        this.asking.add(node);
        try {
          const broker: Broker = await cluster.findBroker({ nodeId: String(node) });
          answers.push(placesIn(await broker.metadata([topic]), topic));
        } finally {
          this.asking.delete(node);
        }
      });
    if (asked.length === 0) throw new Error(`no broker of topic ${topic} is left to ask who leads its partitions`);
    // The first answer, then the others' for a moment: a broker still asked from before is not waited for.
    await Promise.any(asked).catch((error: unknown) => {
      throw error instanceof AggregateError ? error.errors[0] : error;
    });
    let window: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(asked),
      new Promise((resolve) => (window = setTimeout(resolve, answersWindowMs))),
    ]);
    clearTimeout(window);
    this.places = mostNamed(answers);
  }

  /**
   * Every replica this view or kafkajs' own names. kafkajs' view is refreshed beside each refresh
   * (never awaited, but for the very first): through it, brokers that replaced the ones this view
   * names are found, and kafkajs knows a broker's address before it is asked here (asking one it
   * does not know waits on its one-at-a-time refresh).
   */
  private async nodesToAsk(cluster: Cluster): Promise<number[]> {
    const theirs = () => {
      try {
        return placesOf(cluster.findTopicPartitionMetadata(this.options.topic));
      } catch {
        return new Map() as Places; // not loaded yet
      }
    };
    if (this.places.size === 0 && theirs().size === 0) await cluster.refreshMetadataIfNecessary();
    else cluster.refreshMetadataIfNecessary().catch(() => undefined);
    return [...new Set([...replicasOf(this.places), ...replicasOf(theirs())])];
  }
}

function placesOf(partitions: readonly PartitionMetadata[]): Places {
  return new Map(partitions.map(({ partitionId, leader, replicas }) => [partitionId, { leader, replicas }]));
}

function replicasOf(places: Places): number[] {
  return [...new Set([...places.values()].flatMap((place) => place.replicas))];
}

/** The places one broker's metadata gives; throws when it has none for the topic. */
function placesIn({ topicMetadata }: BrokerMetadata, topic: string): Places {
  const entry = topicMetadata.find((each) => each.topic === topic);
  if (entry === undefined || entry.partitionMetadata.length === 0) throw new Error(`no metadata for topic ${topic}`);
  return placesOf(entry.partitionMetadata);
}

/** Per partition, the place most answers give (the earliest answer's among equals). */
export function mostNamed(answers: readonly Places[]): Places {
  const places = new Map<number, PartitionPlace>();
  const partitions = new Set(answers.flatMap((answer) => [...answer.keys()]));
  for (const partition of partitions) {
    const named = answers.flatMap((answer) => answer.get(partition) ?? []);
    const votes = (leader: number) => named.filter((place) => place.leader === leader).length;
    let best: PartitionPlace | undefined;
    for (const place of named) if (best === undefined || votes(place.leader) > votes(best.leader)) best = place;
    if (best !== undefined) places.set(partition, best);
  }
  return places;
}
