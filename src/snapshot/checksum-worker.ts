// The thread of file-checksum.ts: hashes a snapshot file's body (a descriptor the main thread holds
// open) and answers whether the checksum after it matches.
import { parentPort, workerData } from 'node:worker_threads';
import { checksumMatchesNow, type ChecksumRequest } from './file-checksum.js';

parentPort?.postMessage(checksumMatchesNow(workerData as ChecksumRequest));
