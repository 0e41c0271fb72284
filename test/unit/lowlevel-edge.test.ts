// The libfuse 3 edge without a kernel: a recording addon stands in for the C, the fixture core
// for the filesystem. Every request gets exactly one reply; lookups are counted and forgotten;
// a version change is a new inode; a change the core reports invalidates what the kernel holds.
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.js';
import type { ChangeListener, FilesystemCore, NodeAttributes } from '../../src/fs/filesystem-core.js';
import type { Addon, RequestHandler, Session } from '../../src/fuse/lowlevel/addon.js';
import { ATTR } from '../../src/fuse/lowlevel/addon.js';
import { LowLevelEdge, type Negotiated } from '../../src/fuse/lowlevel/lowlevel-edge.js';
import { describeNegotiated } from '../../src/fuse/lowlevel/mount-lowlevel.js';
import type { OperationObserver } from '../../src/fuse/operation-observer.js';

const OPS = { INIT: 1, LOOKUP: 2, FORGET: 3, GETATTR: 4, OPEN: 5, READ: 6, RELEASE: 7, OPENDIR: 8, READDIR: 9, READDIRPLUS: 10, RELEASEDIR: 11, STATFS: 12, GETXATTR: 13, LISTXATTR: 14, EXIT: 15, DRAINED: 16, NOTIFIED: 17 };

interface Reply {
  id: number;
  kind: string;
  value?: unknown;
}

/** The addon's counted opens as native/counted_opens.c keeps them: per inode, the fh, handles open, a gen, retired or answering. */
interface CountedEntry {
  fh: number;
  opens: number;
  gen: number;
  retired: boolean;
  /** The version's bytes, from which the addon answers reads of counted handles. */
  bytes: string | undefined;
}

function recordingAddon() {
  const replies: Reply[] = [];
  const answered = new Set<number>();
  const notifications: string[] = [];
  const counted = new Map<number, CountedEntry>();
  /** Per open the addon counted: how many leading bytes it was told to put in the kernel's page cache. */
  const stored: Array<{ ino: number; storeBytes: number }> = [];
  let gens = 0;
  const reply = (kind: string) => (_session: Session, id: number, value?: unknown) => {
    if (answered.has(id)) return false;
    answered.add(id);
    replies.push({ id, kind, value });
    return true;
  };
  const addon: Addon = {
    mount: () => ({}) as Session,
    unmount: () => true,
    replyErr: (session, id, errno) => reply('err')(session, id, errno),
    replyEntry: (session, id, attrs) => reply('entry')(session, id, Array.from(attrs)),
    replyAttr: (session, id, attrs) => reply('attr')(session, id, Array.from(attrs)),
    replyOpen: (session, id, fh, flags) => reply('open')(session, id, { fh, flags }),
    replyOpenCounted: (session, id, ino, fh, flags, answerLater, bytes, storeBytes = 0) => {
      if (answered.has(id)) return -1;
      stored.push({ ino, storeBytes });
      let entry = counted.get(ino);
      if (entry === undefined) counted.set(ino, (entry = { fh, opens: 0, gen: ++gens, retired: true, bytes: undefined }));
      entry.opens++;
      if (answerLater) entry.retired = false;
      entry.bytes ??= bytes && Buffer.from(bytes).toString();
      reply('open')(session, id, { fh, flags });
      return entry.gen;
    },
    retireOpens: (_session, ino) => {
      const entry = counted.get(ino);
      if (entry === undefined) return 0;
      if (entry.opens === 0) {
        counted.delete(ino);
        return 0;
      }
      entry.retired = true;
      return entry.opens;
    },
    replyBuf: (session, id, bytes) => reply('buf')(session, id, Buffer.from(bytes).toString()),
    replyXattrSize: (session, id, size) => reply('xattr-size')(session, id, size),
    replyStatfs: (session, id) => reply('statfs')(session, id),
    replyDirectory: (session, id, _plus, _max, _first, names) => (reply('dir')(session, id, names) ? names.length : -1),
    notifyInvalEntry: (_session, parent, name) => notifications.push(`entry ${parent} ${name}`) > 0,
    notifyInvalInode: (_session, ino) => notifications.push(`inode ${ino}`) > 0,
    notifyBarrier: () => false,
    stats: () => ({ outstanding: 0, notifications: 0, pendingNotifications: 0, countedInodes: counted.size, opensAnswered: 0, releasesAnswered: 0, readsAnswered: 0 }),
    closeOnExecAll: () => undefined,
    capabilities: { READDIRPLUS: 1 << 13, READDIRPLUS_AUTO: 1 << 14, AUTO_INVAL_DATA: 1 << 12, NO_OPEN_SUPPORT: 1 << 17, NO_OPENDIR_SUPPORT: 1 << 24 },
    ops: OPS,
  };
  return { addon, replies, notifications, counted, stored };
}

/** A one-file core whose content version the test can change. */
function versionedCore() {
  let version = 1;
  let listener: ChangeListener | undefined;
  let hang = false;
  const handles = new Map<number, { text: string; attrs: NodeAttributes }>();
  let next = 1;
  const file = (): NodeAttributes => ({ kind: 'file', sizeBytes: `v${version}`.length, mtimeMs: 1, inode: 100 + version });
  const core: FilesystemCore = {
    async getattr(path) {
      if (path === '/') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 2 };
      if (path === '/dir') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 3 };
      if (path === '/dir/f') return file();
      throw new NotFoundError(path);
    },
    async readdir(path) {
      return path === '/' ? ['dir'] : ['f'];
    },
    async open() {
      if (hang) await new Promise(() => undefined);
      const handle = next++;
      handles.set(handle, { text: `v${version}`, attrs: file() });
      return handle;
    },
    fgetattr: (handle) => handles.get(handle)!.attrs,
    read: (handle, position, length) => Buffer.from(handles.get(handle)!.text).subarray(position, position + length),
    release: (handle) => void handles.delete(handle),
    listxattr: async () => [],
    getxattr: async () => Buffer.alloc(0),
    onChange: (l) => void (listener = l),
  };
  return {
    core,
    bump: () => version++,
    changed: (prefix: string) => listener?.(prefix),
    hang: () => (hang = true),
    openHandles: () => handles.size,
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Files /a and /b, two bytes each; a core handle read after its release throws, as the real core's does. */
function twoFileCore() {
  const handles = new Map<number, string>();
  let next = 1;
  const attrs = (path: string): NodeAttributes => ({ kind: 'file', sizeBytes: 2, mtimeMs: 1, inode: path === '/a' ? 10 : 11 });
  const core: FilesystemCore = {
    async getattr(path) {
      if (path === '/') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 2 };
      if (path === '/a' || path === '/b') return attrs(path);
      throw new NotFoundError(path);
    },
    readdir: async () => ['a', 'b'],
    async open(path) {
      const handle = next++;
      handles.set(handle, path.slice(1).repeat(2));
      return handle;
    },
    fgetattr: (handle) => attrs(handles.get(handle) === 'bb' ? '/b' : '/a'),
    read: (handle, position, length) => {
      const text = handles.get(handle);
      if (text === undefined) throw new NotFoundError(`no open file with handle ${handle}`);
      return Buffer.from(text).subarray(position, position + length);
    },
    bytesOf: (handle) => {
      const text = handles.get(handle);
      return text === undefined ? undefined : Buffer.from(text);
    },
    release: (handle) => void handles.delete(handle),
    listxattr: async () => [],
    getxattr: async () => Buffer.alloc(0),
  };
  return { core, bump: () => 0, changed: () => undefined, hang: () => undefined, openHandles: () => handles.size };
}

/** A core the test drives: its open handles counted, its content version changed, made to hang. */
interface FakeCore {
  core: FilesystemCore;
  openHandles(): number;
  bump(): unknown;
  changed(prefix: string): unknown;
  hang(): unknown;
}

async function edgeOver(fake: FakeCore = versionedCore(), timeoutMs = 1_000, observer?: OperationObserver, pinnedBytesLimit = 1 << 20) {
  const { addon, replies, notifications, counted, stored } = recordingAddon();
  const edge = new LowLevelEdge(addon, fake.core, { log: () => undefined, owner: { uid: 1, gid: 1, fileMode: 0o100400, directoryMode: 0o40500 }, entryTimeoutSeconds: 600, attrTimeoutSeconds: 600, negativeTimeoutSeconds: 1, pinnedBytesLimit, operationTimeoutMs: timeoutMs, ...(observer ? { observer } : {}) }, await fake.core.getattr('/'));
  edge.attach({} as Session, { init: () => undefined, exit: () => undefined });
  let id = 0;
  const send = async (op: number, ino: number, a = 0, b = 0, c = 0, name?: string) => {
    const requestId = ++id;
    (edge.handle as RequestHandler)(op, requestId, ino, a, b, c, name);
    await settle();
    return replies.filter((reply) => reply.id === requestId);
  };
  /** Hands the kernel's requests over all at once, then waits for their replies. */
  const sendTogether = async (requests: Array<[op: number, ino: number, a?: number, b?: number, c?: number, name?: string]>) => {
    const ids = requests.map(([op, ino, a = 0, b = 0, c = 0, name]) => {
      const requestId = ++id;
      (edge.handle as RequestHandler)(op, requestId, ino, a, b, c, name);
      return requestId;
    });
    await settle();
    return ids.map((requestId) => replies.find((reply) => reply.id === requestId));
  };
  /** An open as the kernel makes it: answered by the addon when it counts the inode, else sent to the edge. */
  const open = async (ino: number): Promise<Reply | undefined> => {
    const entry = counted.get(ino);
    if (entry && !entry.retired) {
      entry.opens++;
      return { id: 0, kind: 'open', value: { fh: entry.fh, flags: 1 } };
    }
    return (await send(OPS.OPEN, ino))[0];
  };
  /** A release as the kernel sends it: the addon answers it for a counted handle, telling the edge when a retired entry drains. */
  const release = async (ino: number, fh: number): Promise<void> => {
    const entry = counted.get(ino);
    if (entry && entry.fh === fh && entry.opens > 0) {
      entry.opens--;
      if (entry.opens === 0 && entry.retired) {
        counted.delete(ino);
        (edge.handle as RequestHandler)(OPS.DRAINED, -1, ino, fh, entry.gen, 0, undefined);
      }
      await settle();
      return;
    }
    await send(OPS.RELEASE, ino, fh);
  };
  return { edge, send, sendTogether, open, release, replies, notifications, fake, counted, stored };
}

/**
 * Files whose listed size and served bytes the test sets: /exact (the bytes are its size), /big
 * (2 MiB + 1, its size), /grown (one byte more than the size the kernel was given).
 */
function sizedCore() {
  const MiB = 1 << 20;
  const files: Record<string, { inode: number; listed: number; served: number }> = {
    '/exact': { inode: 20, listed: 5, served: 5 },
    '/big': { inode: 21, listed: 2 * MiB + 1, served: 2 * MiB + 1 },
    '/grown': { inode: 22, listed: 5, served: 6 },
  };
  const handles = new Map<number, string>();
  let next = 1;
  const attrs = (path: string): NodeAttributes => ({ kind: 'file', sizeBytes: files[path]!.listed, mtimeMs: 1, inode: files[path]!.inode });
  const core: FilesystemCore = {
    async getattr(path) {
      if (path === '/') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 2 };
      if (files[path] !== undefined) return attrs(path);
      throw new NotFoundError(path);
    },
    readdir: async () => Object.keys(files).map((path) => path.slice(1)),
    async open(path) {
      handles.set(next, path);
      return next++;
    },
    fgetattr: (handle) => attrs(handles.get(handle)!),
    read: (handle, position, length) => Buffer.alloc(files[handles.get(handle)!]!.served, 0x61).subarray(position, position + length),
    bytesOf: (handle) => Buffer.alloc(files[handles.get(handle)!]!.served, 0x61),
    release: (handle) => void handles.delete(handle),
    listxattr: async () => [],
    getxattr: async () => Buffer.alloc(0),
  };
  return { core, bump: () => 0, changed: () => undefined, hang: () => undefined, openHandles: () => handles.size };
}

describe('the libfuse 3 edge', () => {
  it('reports the FUSE protocol the kernel speaks, as INIT carried it, in the --verbose line', async () => {
    const { addon } = recordingAddon();
    const fake = versionedCore();
    const edge = new LowLevelEdge(addon, fake.core, { log: () => undefined, owner: { uid: 1, gid: 1, fileMode: 0o100400, directoryMode: 0o40500 }, entryTimeoutSeconds: 600, attrTimeoutSeconds: 600, negativeTimeoutSeconds: 1, pinnedBytesLimit: 1 << 20, operationTimeoutMs: 1_000 }, await fake.core.getattr('/'));
    let negotiated: Negotiated | undefined;
    edge.attach({} as Session, { init: (n) => (negotiated = n), exit: () => undefined });
    (edge.handle as RequestHandler)(OPS.INIT, -1, 0, 0, 0, (7 << 16) | 45, undefined);
    expect(negotiated?.kernelProtocol).toBe('7.45');
    expect(describeNegotiated(negotiated!)).toMatch(/^kernel FUSE protocol 7\.45, /);
  });

  it('answers each request once; a new content version is a new inode; an open handle keeps its version', async () => {
    const { send, fake } = await edgeOver();
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const dirIno = (dir!.value as number[])[ATTR.ino]!;
    const [first] = await send(OPS.LOOKUP, dirIno, 0, 0, 0, 'f');
    const firstIno = (first!.value as number[])[ATTR.ino]!;
    const [opened] = await send(OPS.OPEN, firstIno);
    expect(opened).toMatchObject({ kind: 'open', value: { flags: 1 } }); // keep_cache
    fake.bump();
    const [second] = await send(OPS.LOOKUP, dirIno, 0, 0, 0, 'f');
    expect((second!.value as number[])[ATTR.ino]).not.toBe(firstIno);
    // The handle opened on the first version still reads it.
    const [read] = await send(OPS.READ, firstIno, (opened!.value as { fh: number }).fh, 0, 100);
    expect(read).toMatchObject({ kind: 'buf', value: 'v1' });
    // getattr of the old inode answers its own attributes, not the new version's.
    const [attr] = await send(OPS.GETATTR, firstIno);
    expect((attr!.value as number[])[ATTR.size]).toBe(2);
    // Another open of the old inode (a path walked before the kernel was told) reads the old version too.
    const [again] = await send(OPS.OPEN, firstIno);
    expect(again).toMatchObject({ kind: 'open' });
    expect(await send(OPS.READ, firstIno, (again!.value as { fh: number }).fh, 0, 100)).toEqual([expect.objectContaining({ value: 'v1' })]);
    expect(fake.openHandles()).toBe(1); // one core handle per version, however often it is opened
  });

  it('answers ESTALE to an open of a version the core no longer holds, so the kernel looks the name up again', async () => {
    const { send, fake } = await edgeOver();
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const [file] = await send(OPS.LOOKUP, (dir!.value as number[])[ATTR.ino]!, 0, 0, 0, 'f');
    fake.bump();
    const [stale] = await send(OPS.OPEN, (file!.value as number[])[ATTR.ino]!);
    expect(stale).toMatchObject({ kind: 'err', value: 116 });
    expect(fake.openHandles()).toBe(0);
  });

  it.each([
    ['room for one file: each pin evicts the other', 3, 1],
    ['smaller than one file: no pin is kept at all', 1, 0],
  ])('keeps the version an open handle holds, and lets go of it at the last release, with a byte bound of %s (seed 1338198899)', async (_what, pinnedBytesLimit, keptAfterwards) => {
    // The open that waited for a pin another request's pin evicted must still hold it, and its
    // reads must get its bytes; a pin the bound cannot keep is released with the last handle.
    const { send, sendTogether, release, fake } = await edgeOver(twoFileCore(), 1_000, undefined, pinnedBytesLimit);
    const [a] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'a');
    const [b] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'b');
    const inoA = (a!.value as number[])[ATTR.ino]!;
    const inoB = (b!.value as number[])[ATTR.ino]!;
    const opened = await sendTogether([[OPS.OPEN, inoA], [OPS.OPEN, inoB], [OPS.OPEN, inoA]]);
    expect(opened.map((reply) => reply?.kind)).toEqual(['open', 'open', 'open']);
    const fhs = opened.map((reply) => (reply!.value as { fh: number }).fh);
    const reads = await sendTogether(fhs.map((fh, index) => [OPS.READ, index === 1 ? inoB : inoA, fh, 0, 100]));
    expect(reads).toEqual([expect.objectContaining({ kind: 'buf', value: 'aa' }), expect.objectContaining({ kind: 'buf', value: 'bb' }), expect.objectContaining({ kind: 'buf', value: 'aa' })]);
    // Every release lets go of what it held: the core keeps open only what the bound keeps.
    for (const [index, fh] of fhs.entries()) await release(index === 1 ? inoB : inoA, fh);
    expect(fake.openHandles()).toBe(keptAfterwards);
  });

  it('answers a warm open in the addon, with the fh of the kept version, and lets go of a version evicted while open only at its last release', async () => {
    const { send, open, release, fake, counted } = await edgeOver(twoFileCore(), 1_000, undefined, 3);
    const [a] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'a');
    const [b] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'b');
    const inoA = (a!.value as number[])[ATTR.ino]!;
    const inoB = (b!.value as number[])[ATTR.ino]!;
    const first = await open(inoA);
    expect(first?.id, 'the first open reaches the edge').toBeGreaterThan(0);
    const fh = (first!.value as { fh: number }).fh;
    const warm = await open(inoA);
    expect(warm, 'a warm open is answered by the addon').toEqual({ id: 0, kind: 'open', value: { fh, flags: 1 } });
    expect(counted.get(inoA)?.bytes, 'the addon answers reads from the version the open pinned').toBe('aa');
    // B's version evicts A's from the bound while A has two handles open: A's opens reach the edge
    // again, A's bytes stay readable through the open handles, and go with the last release.
    const [openedB] = await send(OPS.OPEN, inoB);
    expect(counted.get(inoA)?.retired).toBe(true);
    expect(await send(OPS.READ, inoA, fh, 0, 100)).toEqual([expect.objectContaining({ value: 'aa' })]);
    expect(fake.openHandles()).toBe(2);
    await release(inoA, fh);
    expect(fake.openHandles()).toBe(2);
    await release(inoA, fh);
    expect(fake.openHandles(), 'A released at its last handle; B kept').toBe(1);
    expect(counted.has(inoA)).toBe(false);
    // Opened again, A is made again and kept; B, evicted with no handle open, is released at once.
    const again = await open(inoA);
    expect(again?.id).toBeGreaterThan(0);
    await release(inoB, (openedB!.value as { fh: number }).fh);
    expect(await send(OPS.READ, inoA, (again!.value as { fh: number }).fh, 0, 100)).toEqual([expect.objectContaining({ value: 'aa' })]);
    expect(fake.openHandles()).toBe(1);
  });

  it('puts a first open\'s bytes in the page cache only when they are the size the kernel holds, and at most 1 MiB of them', async () => {
    const { send, stored } = await edgeOver(sizedCore());
    const storedFor = async (name: string) => {
      const [entry] = await send(OPS.LOOKUP, 1, 0, 0, 0, name);
      const ino = (entry!.value as number[])[ATTR.ino]!;
      expect((await send(OPS.OPEN, ino))[0]).toMatchObject({ kind: 'open' });
      return stored.find((open) => open.ino === ino)?.storeBytes;
    };
    expect(await storedFor('exact')).toBe(5);
    expect(await storedFor('big'), 'the rest comes through reads').toBe(1 << 20);
    // Bytes past the size the kernel holds would grow the file in its page cache: none are stored,
    // and the open still succeeds (its reads go through the addon from the pinned version).
    expect(await storedFor('grown')).toBe(0);
  });

  it('counts lookups and forgets a node only when the kernel has forgotten every one', async () => {
    const { edge, send } = await edgeOver();
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const ino = (dir!.value as number[])[ATTR.ino]!;
    await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const before = edge.nodeCount;
    await send(OPS.FORGET, ino, 1);
    expect(edge.nodeCount).toBe(before);
    await send(OPS.FORGET, ino, 1);
    expect(edge.nodeCount).toBe(before - 1);
    // A forgotten inode is ESTALE, never another node's answer.
    expect(await send(OPS.GETATTR, ino)).toEqual([expect.objectContaining({ kind: 'err', value: 116 })]);
  });

  it('answers ETIMEDOUT when the core does not answer in time, and drops the late answer', async () => {
    const fake = versionedCore();
    const { send, replies } = await edgeOver(fake, 50);
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const [file] = await send(OPS.LOOKUP, (dir!.value as number[])[ATTR.ino]!, 0, 0, 0, 'f');
    fake.hang();
    const id = replies.length + 1;
    await send(OPS.OPEN, (file!.value as number[])[ATTR.ino]!);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(replies.filter((reply) => reply.kind === 'err' && reply.value === 110)).toHaveLength(1);
    expect(replies.filter((reply) => reply.id >= id)).toHaveLength(1);
  });

  it('tells the kernel of a change: the names below the prefix, the directory listings, and misses', async () => {
    const { send, notifications, fake } = await edgeOver();
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    const dirIno = (dir!.value as number[])[ATTR.ino]!;
    await send(OPS.LOOKUP, dirIno, 0, 0, 0, 'f');
    const [miss] = await send(OPS.LOOKUP, dirIno, 0, 0, 0, 'new');
    expect((miss!.value as number[])[ATTR.ino]).toBe(0); // a negative entry
    fake.changed('/dir');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(notifications).toEqual(expect.arrayContaining([`entry 1 dir`, `inode ${dirIno}`, `entry ${dirIno} f`, `entry ${dirIno} new`]));
  });

  it('counts only the readdirplus entries that reached the kernel as lookups', async () => {
    const { edge, send } = await edgeOver();
    const before = edge.nodeCount;
    const [listing] = await send(OPS.READDIRPLUS, 1, 0, 0, 4096);
    expect(listing).toMatchObject({ kind: 'dir', value: ['.', '..', 'dir'] });
    expect(edge.nodeCount).toBe(before + 1);
  });

  it('reports every request to its observer from arrival to its one reply, with the errno answered; ETIMEDOUT once, not the late answer too', async () => {
    const events: string[] = [];
    const observer: OperationObserver = { started: (op) => events.push(`start ${op}`), finished: (op, errno) => events.push(`end ${op} ${errno}`) };
    const fake = versionedCore();
    const { send } = await edgeOver(fake, 50, observer);
    const [dir] = await send(OPS.LOOKUP, 1, 0, 0, 0, 'dir');
    await send(OPS.LOOKUP, 1, 0, 0, 0, 'missing');
    await send(OPS.GETATTR, (dir!.value as number[])[ATTR.ino]!);
    expect(events).toEqual(['start lookup', 'end lookup 0', 'start lookup', 'end lookup 2', 'start getattr', 'end getattr 0']);
    events.length = 0;
    const [file] = await send(OPS.LOOKUP, (dir!.value as number[])[ATTR.ino]!, 0, 0, 0, 'f');
    fake.hang();
    await send(OPS.OPEN, (file!.value as number[])[ATTR.ino]!);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual(['start lookup', 'end lookup 0', 'start open', 'end open 110']);
  });
});
