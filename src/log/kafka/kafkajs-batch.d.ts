// kafkajs' filter of one fetched partition, used by the follower's fetch loops (partition-fetch.ts).
// kafkajs ships no types for its internal modules; this is the part of Batch read here.
declare module 'kafkajs/src/consumer/batch.js' {
  import type { KafkaMessage } from 'kafkajs';

  export default class Batch {
    constructor(topic: string, fetchedOffset: string, partitionData: unknown);
    /** The fetched messages at or after the fetch offset, transaction markers and aborted records included. */
    readonly messagesWithinOffset: KafkaMessage[];
    /** Those a read_committed consumer gets: no markers, no records of aborted transactions. */
    readonly messages: KafkaMessage[];
  }
}
