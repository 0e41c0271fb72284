// Ending the process without losing what it printed: process.exit() drops whatever stdout and
// stderr still hold for a pipe (past the 64 KiB a pipe takes, a slow reader gets a cut report), so
// every command ends through exitAfterDrain. A reader that went away (EPIPE) ends the command
// quietly, not with a throw; one that stops reading altogether is waited for only so long.

type OutputStream = NodeJS.WriteStream & { _handle?: { writeQueueSize?: number } };

/** How long a stream may take none of its queued bytes before the process exits without them. */
const OUTPUT_STALL_MS = 60_000;
/** The same when the person asked to exit now (a second Ctrl-C). */
const HURRIED_STALL_MS = 1_000;

interface StreamFate {
  /** Its reader went away (EPIPE): what is left is nobody's. */
  closed: boolean;
  /** A write failed otherwise (a full disk): the output is not whole. */
  failure: string | undefined;
}

const fates = new Map<OutputStream, StreamFate>();
let program = 'skills-mount';

/** From now on a closed reader (EPIPE) on stdout or stderr is noted quietly, and any other write error kept for the exit; `name` starts what the exit says. */
export function watchOutputStreams(name?: string): void {
  program = name ?? program;
  for (const stream of [process.stdout, process.stderr] as OutputStream[]) {
    if (fates.has(stream)) continue;
    const fate: StreamFate = { closed: false, failure: undefined };
    fates.set(stream, fate);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') fate.closed = true;
      else fate.failure ??= error.message;
    });
  }
}

/**
 * Ends the process with `code` once stdout and stderr have handed every queued byte to their
 * readers, their readers went away, or one took nothing for `stallMs`. Output cut short (a stalled
 * reader, a failed write) turns an exit 0 into 1, said on stderr.
 */
export async function exitAfterDrain(code: number, options: { stallMs?: number; hurried?: boolean } = {}): Promise<never> {
  watchOutputStreams();
  const stallMs = options.stallMs ?? (options.hurried ? HURRIED_STALL_MS : OUTPUT_STALL_MS);
  const [out, err] = await Promise.all([drained(process.stdout, stallMs), drained(process.stderr, stallMs)]);
  const cut = [out !== undefined ? `stdout: ${out}` : '', err !== undefined ? `stderr: ${err}` : ''].filter(Boolean);
  if (cut.length > 0 && err === undefined) process.stderr.write(`${program}: ${cut.join('; ')}\n`);
  process.exit(out !== undefined && code === 0 ? 1 : code);
}

/** Resolves once `stream` holds nothing more for its reader: undefined when all of it went (or the reader left), else why not. */
function drained(stream: OutputStream, stallMs: number): Promise<string | undefined> {
  const fate = fates.get(stream)!;
  return new Promise((resolve) => {
    const done = (why: string | undefined) => {
      clearInterval(watch);
      resolve(why);
    };
    // Queued bytes not yet taken: libuv's queue shrinks as the reader reads, while writableLength counts a chunk until all of it went.
    const queued = () => stream._handle?.writeQueueSize ?? stream.writableLength;
    let last = queued();
    let lastProgressAt = Date.now();
    const watch = setInterval(() => {
      const now = queued();
      if (now !== last) [last, lastProgressAt] = [now, Date.now()];
      else if (Date.now() - lastProgressAt >= stallMs) done(`nothing read for ${stallMs / 1000} s, ${queued()} bytes left unwritten`);
    }, Math.min(250, stallMs));
    // Writes complete in order: this one's callback runs once everything queued before it went (or failed).
    stream.write('', () => done(fate.failure === undefined || fate.closed ? undefined : `not written whole (${fate.failure})`));
  });
}
