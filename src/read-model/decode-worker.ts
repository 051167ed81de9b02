// A decoding thread of the DecodePool: checks record values against the event schema with the
// same decodeEvent as everywhere else and answers with fold rows, in the order it was asked.
import { parentPort } from 'node:worker_threads';
import { decodeEvent } from '../../projections/codec.js';
import { foldRow, type FoldRow } from './fold-input.js';

export interface DecodeRequest {
  readonly id: number;
  /** The values one after the other; `ends[i]` is where value i ends. */
  readonly bytes: Uint8Array;
  readonly ends: Uint32Array;
}

export interface DecodeResponse {
  readonly id: number;
  readonly rows: FoldRow[];
}

parentPort?.on('message', ({ id, bytes, ends }: DecodeRequest) => {
  const rows: FoldRow[] = [];
  let start = 0;
  for (const end of ends) {
    rows.push(foldRow(decodeEvent(bytes.subarray(start, end))));
    start = end;
  }
  parentPort?.postMessage({ id, rows } satisfies DecodeResponse);
});
