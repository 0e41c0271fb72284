// The names the libfuse 3 edge pushes to the addon's table, without a kernel: a recording addon
// with a table stands in for the C. What is pushed and when, that a change drops it before the
// kernel is told, that work begun before a change pushes nothing, and that lookups the addon
// answered are counted before a FORGET.
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.js';
import type { ChangeListener, FilesystemCore, NodeAttributes } from '../../src/fs/filesystem-core.js';
import { ATTR, ATTR_FIELDS, LOOKUP_FIELDS, type Addon, type AddonLookups, type RequestHandler, type Session } from '../../src/fuse/lowlevel/addon.js';
import { LowLevelEdge } from '../../src/fuse/lowlevel/lowlevel-edge.js';

const OPS = { INIT: 1, LOOKUP: 2, FORGET: 3, GETATTR: 4, OPEN: 5, READ: 6, RELEASE: 7, OPENDIR: 8, READDIR: 9, READDIRPLUS: 10, RELEASEDIR: 11, STATFS: 12, GETXATTR: 13, LISTXATTR: 14, EXIT: 15, DRAINED: 16, NOTIFIED: 17, LOOKUPS: 18 };
const S_IFDIR = 0o040000;

/** What the table holds per directory: name -> attributes (mode 0: listed only), and whether whole. */
interface Held {
  whole: boolean;
  names: Map<string, number[]>;
  /** name -> the stored copy pushed with it: its path and digest (hex). */
  copies: Map<string, { path: string; digest: string }>;
}

function tableAddon() {
  /** Puts, drops and notifications in the order the edge made them. */
  const events: string[] = [];
  const held = new Map<number, Held>();
  const replies = new Map<number, { kind: string; value: unknown }>();
  let waiting: AddonLookups | undefined;
  const reply = (kind: string) => (_session: Session, id: number, value?: unknown) => {
    if (replies.has(id)) return false;
    replies.set(id, { kind, value });
    return true;
  };
  const addon: Addon = {
    mount: () => ({}) as Session,
    unmount: () => true,
    replyErr: (session, id, errno) => reply('err')(session, id, errno),
    replyEntry: (session, id, attrs) => reply('entry')(session, id, Array.from(attrs)),
    replyAttr: (session, id, attrs) => reply('attr')(session, id, Array.from(attrs)),
    replyOpen: (session, id, fh) => reply('open')(session, id, fh),
    replyOpenCounted: (session, id) => (reply('open')(session, id) ? 1 : -1),
    retireOpens: () => 0,
    replyBuf: (session, id, bytes) => reply('buf')(session, id, Buffer.from(bytes).toString()),
    replyXattrSize: (session, id, size) => reply('xattr-size')(session, id, size),
    replyStatfs: (session, id) => reply('statfs')(session, id),
    replyDirectory: (session, id, _plus, _max, _first, names) => (reply('dir')(session, id, names) ? names.length : -1),
    notifyInvalEntry: (_session, parent, name) => events.push(`notify entry ${parent} ${name}`) > 0,
    notifyInvalInode: (_session, ino) => events.push(`notify inode ${ino}`) > 0,
    notifyBarrier: () => false,
    tableLimit: () => true,
    copyLimits: () => true,
    tablePut: (_session, dir, whole, names, attrs, copies, digests) => {
      const kept = whole ? undefined : held.get(dir);
      const entry = kept ?? { whole: false, names: new Map<string, number[]>(), copies: new Map() };
      names.forEach((name, index) => {
        entry.names.set(name, Array.from(attrs.subarray(index * ATTR_FIELDS, (index + 1) * ATTR_FIELDS)));
        const copy = copies?.[index];
        if (copy === undefined) entry.copies.delete(name);
        else entry.copies.set(name, { path: copy, digest: Buffer.from(digests!.subarray(index * 32, (index + 1) * 32)).toString('hex') });
      });
      if (whole) entry.whole = true;
      held.set(dir, entry);
      events.push(`put ${dir} ${whole ? 'whole' : 'names'} ${names.join(',')}`);
      return true;
    },
    tableDrop: (_session, dir) => {
      events.push(`drop ${dir}`);
      return held.delete(dir);
    },
    tableLookups: () => {
      const taken = waiting;
      waiting = undefined;
      return taken;
    },
    stats: () => ({ outstanding: 0, notifications: 0, pendingNotifications: 0, countedInodes: 0, opensAnswered: 0, releasesAnswered: 0, readsAnswered: 0 }),
    closeOnExecAll: () => undefined,
    capabilities: { READDIRPLUS: 1 << 13 },
    ops: OPS,
  };
  /** The addon answered these lookups from its table: (parent, name, attributes, times). */
  const answered = (lookups: Array<[parent: number, name: string, attrs: number[], times: number]>) => {
    const fields = new Float64Array(lookups.length * LOOKUP_FIELDS);
    lookups.forEach(([parent, , attrs, times], index) => fields.set([parent, times, ...attrs], index * LOOKUP_FIELDS));
    waiting = { names: lookups.map(([, name]) => name), fields };
  };
  return { addon, events, held, replies, answered };
}

/** /dir holding file f (a new inode per version) and the live document /dir/live.json; the core's getattr can be held back. */
function changingCore() {
  let version = 1;
  let listener: ChangeListener | undefined;
  let gate: Promise<void> | undefined;
  const attrs = (path: string): NodeAttributes => {
    if (path === '/') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 1 };
    if (path === '/dir') return { kind: 'directory', sizeBytes: 0, mtimeMs: 1, inode: 3 };
    if (path === '/dir/f') return { kind: 'file', sizeBytes: version, mtimeMs: 1, inode: 100 + version };
    if (path === '/dir/live.json') return { kind: 'file', sizeBytes: 10, mtimeMs: 1, inode: 50, cacheSeconds: 0 };
    throw new NotFoundError(path);
  };
  const core: FilesystemCore = {
    async getattr(path) {
      const answer = attrs(path);
      if (gate) await gate;
      return answer;
    },
    readdir: async (path) => (path === '/' ? ['dir'] : ['f', 'live.json']),
    open: async () => 1,
    fgetattr: () => attrs('/dir/f'),
    read: () => Buffer.alloc(0),
    release: () => undefined,
    listxattr: async () => [],
    getxattr: async () => Buffer.alloc(0),
    onChange: (l) => void (listener = l),
  };
  return {
    core,
    change: () => {
      version++;
      void listener?.('/dir');
    },
    /** A new version the core reports to nobody (as when it has let go of the path's number). */
    changeSilently: () => version++,
    /** getattr answers (with what was current when it was called) only once the returned function is called. */
    holdGetattr: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function edgeOver() {
  const fake = changingCore();
  const table = tableAddon();
  const edge = new LowLevelEdge(table.addon, fake.core, { log: () => undefined, owner: { uid: 1, gid: 1, fileMode: 0o100400, directoryMode: S_IFDIR | 0o500 }, entryTimeoutSeconds: 600, attrTimeoutSeconds: 600, negativeTimeoutSeconds: 1, pinnedBytesLimit: 1 << 20, operationTimeoutMs: 1_000 }, await fake.core.getattr('/'));
  edge.attach({} as Session, { init: () => undefined, exit: () => undefined });
  let id = 0;
  const start = (op: number, ino: number, a = 0, b = 0, c = 0, name?: string) => {
    const requestId = ++id;
    (edge.handle as RequestHandler)(op, requestId, ino, a, b, c, name);
    return requestId;
  };
  const send = async (op: number, ino: number, a = 0, b = 0, c = 0, name?: string) => {
    const requestId = start(op, ino, a, b, c, name);
    await settle();
    return table.replies.get(requestId);
  };
  const lookup = async (parent: number, name: string) => ((await send(OPS.LOOKUP, parent, 0, 0, 0, name))!.value as number[])[ATTR.ino]!;
  return { edge, fake, ...table, start, send, lookup };
}

describe('names pushed to the addon', () => {
  it('pushes a name once a lookup answered it, with its parent as "." and both with their timeouts', async () => {
    const { lookup, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    const file = await lookup(dir, 'f');
    expect(held.get(1)?.names.get('dir')?.slice(ATTR.ino, ATTR.mode + 1)).toEqual([dir, S_IFDIR | 0o500]);
    expect(held.get(1)?.names.get('.')?.[ATTR.ino]).toBe(1);
    const f = held.get(dir)?.names.get('f');
    expect(f?.[ATTR.ino]).toBe(file);
    expect([f?.[ATTR.entryTimeoutSeconds], f?.[ATTR.attrTimeoutSeconds]]).toEqual([600, 600]);
    expect(held.get(dir)?.whole).toBe(false);
  });

  it('never pushes a name whose answers hold only briefly, and lists it only in a whole listing', async () => {
    const { lookup, send, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    await lookup(dir, 'live.json');
    expect(held.get(dir)?.names.has('live.json') ?? false).toBe(false);
    await send(OPS.READDIRPLUS, dir, 0, 0, 64 * 1024);
    const listed = held.get(dir)!;
    expect(listed.whole).toBe(true);
    expect([...listed.names.keys()]).toEqual(['.', '..', 'f', 'live.json']);
    expect(listed.names.get('live.json')?.[ATTR.mode], 'listed only: its lookups reach JS').toBe(0);
    expect(listed.names.get('f')?.[ATTR.mode]).not.toBe(0);
  });

  it('drops what it pushed under a changed prefix before the kernel is told, and the next lookup pushes the new version', async () => {
    const { lookup, fake, events, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    const first = await lookup(dir, 'f');
    events.length = 0;
    fake.change();
    expect(held.has(dir), 'dropped at once, not at the batched flush').toBe(false);
    expect(held.has(1), "the changed directory's parent too").toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const firstNotify = events.findIndex((event) => event.startsWith('notify'));
    expect(firstNotify).toBeGreaterThan(0);
    expect(events.slice(0, firstNotify)).toEqual(expect.arrayContaining([`drop ${dir}`, 'drop 1']));
    // Every notification follows a drop of the directory it concerns.
    for (const [index, event] of events.entries()) {
      const directory = /^notify (?:entry (\d+)|inode (\d+))/.exec(event);
      if (directory) expect(events.slice(0, index), event).toContain(`drop ${directory[1] ?? directory[2]}`);
    }
    const second = await lookup(dir, 'f');
    expect(second).not.toBe(first);
    expect(held.get(dir)?.names.get('f')?.[ATTR.ino]).toBe(second);
  });

  it('drops the name of a version an open found stale before it tells the kernel, so the retried lookup reaches JS', async () => {
    const { lookup, send, fake, events, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    const first = await lookup(dir, 'f');
    fake.changeSilently();
    expect(await send(OPS.OPEN, first)).toMatchObject({ kind: 'err', value: 116 }); // ESTALE
    expect(held.has(dir)).toBe(false);
    expect(events.indexOf(`drop ${dir}`)).toBeLessThan(events.indexOf(`notify entry ${dir} f`));
    expect(await lookup(dir, 'f')).not.toBe(first);
  });

  it('pushes nothing that was resolved before a change and answered after it', async () => {
    const { lookup, start, fake, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    const release = fake.holdGetattr();
    start(OPS.LOOKUP, dir, 0, 0, 0, 'f'); // resolves version 1, answers once released
    await settle();
    fake.change();
    release();
    await settle();
    expect(held.get(dir)?.names.has('f') ?? false, 'the old version is not pushed after the change').toBe(false);
  });

  it('pushes a listing whole only when one pass of READDIRPLUS gave every entry', async () => {
    const { lookup, send, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    // Room for two entries (". .." headers of 152 bytes + name, 8-aligned): the listing takes two pages.
    await send(OPS.READDIRPLUS, dir, 0, 0, 2 * 160);
    expect(held.get(dir)?.whole ?? false).toBe(false);
    await send(OPS.READDIRPLUS, dir, 0, 2, 64 * 1024);
    expect(held.get(dir)?.whole).toBe(true);
    // A plain READDIR has no attributes to push.
    const other = await edgeOver();
    const dir2 = await other.lookup(1, 'dir');
    await other.send(OPS.READDIR, dir2, 0, 0, 64 * 1024);
    expect(other.held.get(dir2)?.whole ?? false).toBe(false);
  });

  it('counts the lookups the addon answered before a FORGET, so the node stays while the kernel holds it', async () => {
    const { edge, lookup, send, answered, held, replies } = await edgeOver();
    const dir = await lookup(1, 'dir');
    const before = edge.nodeCount;
    // The addon answered two more lookups of "dir" from the table; the kernel then forgets two.
    answered([[1, 'dir', held.get(1)!.names.get('dir')!, 2]]);
    await send(OPS.FORGET, dir, 2);
    expect(edge.nodeCount).toBe(before);
    const attr = await send(OPS.GETATTR, dir);
    expect(attr).toMatchObject({ kind: 'attr' });
    await send(OPS.FORGET, dir, 1);
    expect(edge.nodeCount).toBe(before - 1);
    expect(held.has(dir), "a forgotten directory's names go").toBe(false);
    expect(replies.size).toBeGreaterThan(0);
  });

  it('knows a node first looked up by the addon (from a pushed listing) when the kernel opens it', async () => {
    const { lookup, send, answered, held } = await edgeOver();
    const dir = await lookup(1, 'dir');
    await send(OPS.READDIRPLUS, dir, 0, 0, 64 * 1024);
    await send(OPS.FORGET, (held.get(dir)!.names.get('f')!)[ATTR.ino]!, 1); // readdirplus counted it; the kernel let go
    const f = held.get(dir)!.names.get('f')!;
    answered([[dir, 'f', f, 1]]);
    expect(await send(OPS.GETATTR, f[ATTR.ino]!)).toMatchObject({ kind: 'attr' });
  });
});

/**
 * A core that holds /skill (a, sub/) and /skill/sub (x, y) without asking anyone, /open whose
 * names serve lookups only (readdir would ask a server), and /wide, too large to push.
 */
function heldCore() {
  let listener: ChangeListener | undefined;
  /** /skill/sub/x has a stored copy, allowed once /skill/a was opened (as a SKILL.md read allows a skill's files). */
  let copyAllowed = false;
  const inodes: Record<string, number> = { '/': 1, '/skill': 10, '/skill/a': 11, '/skill/sub': 12, '/skill/sub/x': 13, '/skill/sub/y': 14, '/open': 20, '/open/p': 21, '/wide': 30 };
  const attrs = (path: string): NodeAttributes => {
    const inode = inodes[path] ?? (path.startsWith('/wide/') ? 1_000 + Number(path.slice(7)) : undefined);
    if (inode === undefined) throw new NotFoundError(path);
    const directory = ['/', '/skill', '/skill/sub', '/open', '/wide'].includes(path);
    return { kind: directory ? 'directory' : 'file', sizeBytes: directory ? 0 : 7, mtimeMs: 1, inode };
  };
  const children: Record<string, string[]> = { '/': ['skill', 'open', 'wide'], '/skill': ['a', 'sub'], '/skill/sub': ['x', 'y'], '/open': ['p'], '/wide': Array.from({ length: 600 }, (_, i) => `n${i}`) };
  const asked: Array<[string, number]> = [];
  const core: FilesystemCore = {
    getattr: async (path) => attrs(path),
    readdir: async (path) => children[path] ?? [],
    readdirHeld: (path, maxChildren) => {
      asked.push([path, maxChildren]);
      const names = children[path];
      if (names === undefined || names.length > maxChildren) return undefined;
      const base = path === '/' ? '' : path;
      const copyOf = (name: string) => (path === '/skill/sub' && name === 'x' && copyAllowed ? { path: '/cache/x', digest: 'ab'.repeat(32) } : undefined);
      return {
        complete: path !== '/open',
        children: names.map((name) => ({ name, attributes: attrs(`${base}/${name}`), copy: copyOf(name) })),
        copiesPending: path === '/skill/sub' && !copyAllowed,
      };
    },
    open: async (path) => {
      if (path === '/skill/a') copyAllowed = true;
      return 1;
    },
    fgetattr: () => attrs('/skill/a'),
    read: () => Buffer.alloc(0),
    release: () => undefined,
    listxattr: async () => [],
    getxattr: async () => Buffer.alloc(0),
    onChange: (l) => void (listener = l),
  };
  return { core, asked, change: (prefix: string) => void listener?.(prefix) };
}

describe('held directories pushed at the first lookup in them', () => {
  /** canCopy false: an addon that cannot open copies (no SHA-256 in its Node). */
  async function edgeOverHeld(canCopy = true) {
    const fake = heldCore();
    const table = tableAddon();
    if (!canCopy) table.addon.copyLimits = () => false;
    const edge = new LowLevelEdge(table.addon, fake.core, { log: () => undefined, owner: { uid: 1, gid: 1, fileMode: 0o100400, directoryMode: S_IFDIR | 0o500 }, entryTimeoutSeconds: 600, attrTimeoutSeconds: 600, negativeTimeoutSeconds: 1, pinnedBytesLimit: 1 << 20, operationTimeoutMs: 1_000 }, await fake.core.getattr('/'));
    edge.attach({} as Session, { init: () => undefined, exit: () => undefined });
    let id = 0;
    const lookup = async (parent: number, name: string) => {
      const requestId = ++id;
      (edge.handle as RequestHandler)(OPS.LOOKUP, requestId, parent, 0, 0, 0, name);
      await settle();
      return (table.replies.get(requestId)!.value as number[])[ATTR.ino]!;
    };
    const open = async (ino: number) => {
      const requestId = ++id;
      (edge.handle as RequestHandler)(OPS.OPEN, requestId, ino, 0, 0, 0, undefined);
      await settle();
      return table.replies.get(requestId);
    };
    return { fake, ...table, lookup, open };
  }

  it('pushes a stored copy with its name once the core allows it: the directory whose copies waited is pushed again after an open in or above it', async () => {
    const { lookup, open, held } = await edgeOverHeld();
    await lookup(1, 'skill');
    expect(held.get(12)!.copies.size, 'no copy before the skill was read').toBe(0);
    const a = await lookup(10, 'a');
    expect(await open(a)).toMatchObject({ kind: 'open' });
    // /skill/sub waited: pushed again with /skill, x with its copy and digest, y with none.
    expect(Object.fromEntries(held.get(12)!.copies)).toEqual({ x: { path: '/cache/x', digest: 'ab'.repeat(32) } });
    expect(held.get(12)!.whole).toBe(true);
  });

  it('pushes no copy when the addon cannot open copies', async () => {
    const { lookup, open, held } = await edgeOverHeld(false);
    await lookup(1, 'skill');
    expect(await open(await lookup(10, 'a'))).toMatchObject({ kind: 'open' });
    expect(held.get(12)!.copies.size).toBe(0);
  });

  it('pushes the directory and its held subdirectories, complete where readdir would answer just those names, before the reply', async () => {
    const { lookup, held, events } = await edgeOverHeld();
    await lookup(1, 'skill');
    // The root is held too (complete), pushed with its held subdirectories; /wide is over the bound.
    expect([...held.get(10)!.names.keys()]).toEqual(['.', '..', 'a', 'sub']);
    expect(held.get(10)!.whole).toBe(true);
    expect(held.get(12)!.whole, 'sub, which the kernel has not looked up yet').toBe(true);
    expect([...held.get(12)!.names.keys()]).toEqual(['.', '..', 'x', 'y']);
    expect(held.get(12)!.names.get('..')?.[ATTR.ino]).toBe(10);
    expect(held.get(12)!.names.get('x')?.slice(ATTR.ino, ATTR.size + 1)).toEqual([13, 0o100400, 1, 1, 1, 7]);
    expect(held.get(20)!.whole, '/open: names for lookups only').toBe(false);
    expect([...held.get(20)!.names.keys()]).toEqual(['.', '..', 'p']);
    expect(held.has(30)).toBe(false);
    // The pushes came before the reply: the first event is a put, none follows for the same directories.
    expect(events[0]).toMatch(/^put 1 whole /);
  });

  it('asks with the bound and stops at it: a directory over it costs a size check at each lookup, and is pushed name by name', async () => {
    const { lookup, held, fake } = await edgeOverHeld();
    await lookup(1, 'wide');
    const wide = fake.asked.filter(([path]) => path === '/wide');
    expect(wide.length).toBeGreaterThan(0);
    for (const [, maxChildren] of wide) expect(maxChildren).toBeLessThanOrEqual(512);
    await lookup(30, 'n5');
    expect([...held.get(30)!.names.keys()]).toEqual(['.', 'n5']);
    expect(held.get(30)!.whole).toBe(false);
  });

  it('asks once per directory until a change drops it, and a change drops what was pushed ahead before the kernel is told', async () => {
    const { lookup, held, fake, events } = await edgeOverHeld();
    await lookup(1, 'skill');
    const asked = fake.asked.length;
    await lookup(10, 'a');
    expect(fake.asked.length, 'skill was pushed with the root: nothing asked again').toBe(asked);
    events.length = 0;
    fake.change('/skill');
    expect(held.has(12), 'sub, pushed ahead, dropped at once').toBe(false);
    expect(held.has(10)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const firstNotify = events.findIndex((event) => event.startsWith('notify'));
    expect(events.slice(0, Math.max(0, firstNotify))).toEqual(expect.arrayContaining(['drop 12', 'drop 10']));
    await lookup(10, 'a');
    expect(held.get(10)?.whole, 'pushed again at the next lookup').toBe(true);
  });
});
