// The heads (next offsets) of some partitions of a topic, asked of one broker: kafkajs' Broker has
// listOffsets (Cluster.fetchTopicsOffset sends it to the leaders kafkajs' own view names), but its
// types do not declare it. The head reads ask the leaders their own view names (leaders-view.ts).
import type { Broker } from 'kafkajs';

/** ListOffsets' timestamp for "the offset the next record gets". */
const LATEST = -1;
/** As a kafkajs consumer's default (read_committed): what Cluster.fetchTopicsOffset asked with. */
const READ_COMMITTED = 1;

interface ListOffsetsAnswer {
  readonly responses: readonly {
    readonly topic: string;
    readonly partitions: readonly { readonly partition: number; readonly offset: string }[];
  }[];
}

interface OffsetsBroker {
  listOffsets(request: {
    isolationLevel: number;
    topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[];
  }): Promise<ListOffsetsAnswer>;
}

function hasListOffsets(broker: Broker): broker is Broker & OffsetsBroker {
  return typeof (broker as Partial<OffsetsBroker>).listOffsets === 'function';
}

/** Per partition of `partitions`, its head as `broker` (their leader) gives it; kafkajs throws a partition's error. */
export async function listHeads(
  broker: Broker,
  topic: string,
  partitions: readonly number[],
): Promise<Map<number, number>> {
  if (!hasListOffsets(broker)) throw new Error('this kafkajs broker has no listOffsets');
  const { responses } = await broker.listOffsets({
    isolationLevel: READ_COMMITTED,
    topics: [{ topic, partitions: partitions.map((partition) => ({ partition, timestamp: LATEST })) }],
  });
  return new Map(
    responses
      .filter((response) => response.topic === topic)
      .flatMap((response) => response.partitions.map(({ partition, offset }) => [partition, Number(offset)] as const)),
  );
}
