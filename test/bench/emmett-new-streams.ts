// Makes emmett-postgresql's event store enforce "this stream does not exist yet" on append.
//
// Emmett's command handler appends to a stream it read as empty with expectedStreamVersion
// STREAM_DOES_NOT_EXIST. emmett-postgresql 0.42.0 (and its main branch, where the line carries a
// "TODO: this needs to be fixed") sends that to emt_append_to_stream as NULL, which means "no
// check": the function takes the stream's current position as the expected one. So a create that
// read the empty stream before a racing create committed, and appends after it, succeeds too: the
// racing-writes test saw three 200s of twenty with different bodies. Version 0, the store's own
// PostgreSQLEventStoreDefaultStreamVersion, means the same and is enforced: the function inserts the
// stream's row, and a second insert fails on its primary key (reported as a version conflict).
// This wrapper sends 0 instead, on the store and on each session the command handler opens.
import {
  STREAM_DOES_NOT_EXIST,
  type AppendToStreamOptions,
  type BigIntStreamPosition,
  type Event,
  type EventStoreSession,
} from '@event-driven-io/emmett';
import { PostgreSQLEventStoreDefaultStreamVersion, type PostgresEventStore } from '@event-driven-io/emmett-postgresql';

type AppendOptions<EventType extends Event, EventPayloadType extends Event> = AppendToStreamOptions<
  BigIntStreamPosition,
  EventType,
  EventPayloadType
>;

function enforced<EventType extends Event, EventPayloadType extends Event>(
  options: AppendOptions<EventType, EventPayloadType> | undefined,
): AppendOptions<EventType, EventPayloadType> | undefined {
  if (options?.expectedStreamVersion !== STREAM_DOES_NOT_EXIST) return options;
  return { ...options, expectedStreamVersion: PostgreSQLEventStoreDefaultStreamVersion };
}

export function enforceNewStreams(store: PostgresEventStore): PostgresEventStore {
  return {
    // The store's other methods are arrow functions or call this.readStream, which the copy keeps.
    ...store,
    appendToStream: <EventType extends Event, EventPayloadType extends Event = EventType>(
      streamName: string,
      events: EventType[],
      options?: AppendOptions<EventType, EventPayloadType>,
    ) => store.appendToStream<EventType, EventPayloadType>(streamName, events, enforced(options)),
    withSession: <T>(callback: (session: EventStoreSession<PostgresEventStore>) => Promise<T>) =>
      store.withSession((session) => callback({ ...session, eventStore: enforceNewStreams(session.eventStore) })),
  };
}
