// kafkajs opens a broker's fetch connection (the second of its two, beside the one for every other
// request) on the first fetch, without a lock. Fetch loops of several partitions led by one broker
// that start together each open a socket for it, and only the last is kept: the others stay open
// after the cluster disconnects (measured: two sockets left for a three-partition topic, holding
// the process alive). Through this cluster, a broker's fetches wait while one is connecting: until
// a fetch to it has succeeded, and again after one failed (its connection may be gone), the first
// goes alone and the others follow once it has settled.
import type { Broker, Cluster } from 'kafkajs';

type FetchRequest = Parameters<Broker['fetch']>[0];

/** `cluster`, its brokers' fetches gated as the header says (everything else passes through). */
export function fetchGated(cluster: Cluster): Cluster {
  const gates = new Map<Broker, Broker>();
  const findBroker: Cluster['findBroker'] = async (query) => {
    const broker = await cluster.findBroker(query);
    let gated = gates.get(broker);
    if (gated === undefined) {
      gated = gateFetches(broker);
      gates.set(broker, gated);
    }
    return gated;
  };
  return new Proxy(cluster, {
    get: (target, property, receiver) =>
      property === 'findBroker' ? findBroker : (Reflect.get(target, property, receiver) as unknown),
  });
}

function gateFetches(broker: Broker): Broker {
  let connected = false;
  let connecting: Promise<unknown> | undefined;
  const fetch = async (request: FetchRequest): Promise<unknown> => {
    while (connecting !== undefined) await connecting.catch(() => undefined);
    if (connected) {
      return (broker.fetch(request) as Promise<unknown>).catch((error: unknown) => {
        connected = false;
        throw error;
      });
    }
    const attempt = broker.fetch(request) as Promise<unknown>;
    connecting = attempt;
    try {
      const answer = await attempt;
      connected = true;
      return answer;
    } finally {
      connecting = undefined;
    }
  };
  return new Proxy(broker, {
    get: (target, property, receiver) =>
      property === 'fetch' ? fetch : (Reflect.get(target, property, receiver) as unknown),
  });
}
