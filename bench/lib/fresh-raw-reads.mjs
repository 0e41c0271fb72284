// The raw baseline for the 16 MiB rows, read in a process of its own as the mount's daemon is:
// a client that has never read a large file pays V8's warm-up on its first one (~70 ms of 16 MiB
// over HTTP, measured), so a baseline read in the long-lived benchmark process is not the same
// work as a fresh daemon's first read. Run as a script, it is that fresh process: it connects
// (stdio or Streamable HTTP, in one era), lists, reads each URI in turn and prints their times.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connectHttp, connectStdio, listAllSkills, readBytes } from './raw-client.mjs';

/** The SDK's stdio limit on one message is 10 MiB; a 16 MiB file's base64 needs more. */
const STDIO_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Reads `files` ({uri, sizeBytes}) in order in a new Node process connected to `target` ({url} or
 * {dir}) in `era` ('legacy' or 'modern'); resolves the ms of each read.
 */
export function freshRawReads(target, era, files) {
  const args = [fileURLToPath(import.meta.url), JSON.stringify({ target, era, files })];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`raw reads (${era}) failed: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  );
}

async function main({ target, era, files }) {
  const client = target.url ? await connectHttp(target.url, { era }) : await connectStdio(target.dir, [], { maxBufferSize: STDIO_MAX_BUFFER_BYTES, era });
  try {
    // As the mount does at start: list first.
    await listAllSkills(client);
    const ms = [];
    for (const file of files) {
      const startedMs = performance.now();
      const bytes = await readBytes(client, file.uri);
      ms.push(performance.now() - startedMs);
      if (bytes.length !== file.sizeBytes) throw new Error(`${file.uri}: ${bytes.length} bytes, expected ${file.sizeBytes}`);
    }
    process.stdout.write(JSON.stringify(ms));
  } finally {
    await client.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(JSON.parse(process.argv[2]));
