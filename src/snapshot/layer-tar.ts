// The layer of an image as bytes, the same on every machine for the same tree: a POSIX tar
// (ustar; a PAX `path` record only for a name ustar cannot hold, never a time), entries sorted,
// owner 0:0, mtime 0, modes as given; gzip with no name, mtime 0, level 9, and a deflate stream
// from fflate (pure JavaScript, pinned): Node's bundled zlib is Chromium's, which hashes with the
// CPU's CRC32 instruction where it has one, so its bytes can differ from one machine to another.
// Also the reverse, for `verify`: a layer read back in memory. Knows tar and gzip, not skills.
import { gunzipSync } from 'node:zlib';
import { deflateSync } from 'fflate';
import { IntegrityError } from '../errors.js';
import { safeRelativePath } from './snapshot-manifest.js';

/** One entry of a layer: a directory or a regular file, its path relative to the layer's root ('' is the root itself). */
export type LayerEntry = { path: string; mode: number } & ({ kind: 'directory' } | { kind: 'file'; bytes: Buffer });

/** An entry read back from a layer: anything but a file or a directory is `other`, with its tar type. */
export type ReadEntry = LayerEntry | { path: string; mode: number; kind: 'other'; type: string };

const BLOCK = 512;
const GZIP_LEVEL = 9;
/** fflate's memory level, fixed rather than derived from the input's size. */
const GZIP_MEMORY = 8;
/** The largest size an 11-digit octal field holds. */
const MAX_USTAR_SIZE = 0o77777777777;

/** The tar of `entries`, root first, then sorted by path (a folder before what it holds). */
export function layerTar(entries: readonly LayerEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => compareBytes(a.path, b.path));
  const blocks: Buffer[] = [];
  for (const entry of sorted) {
    if (entry.path !== '' && !safeRelativePath(entry.path)) throw new IntegrityError(`a layer cannot hold the path ${JSON.stringify(entry.path)}`);
    const name = entry.path === '' ? './' : entry.kind === 'directory' ? `${entry.path}/` : entry.path;
    const size = entry.kind === 'file' ? entry.bytes.length : 0;
    if (size > MAX_USTAR_SIZE) throw new IntegrityError(`${entry.path}: ${size} bytes is more than a tar entry holds`);
    const split = ustarName(name);
    if (split === undefined) {
      const record = paxRecord('path', name);
      blocks.push(header({ name: paxName(name), size: record.length, mode: 0o444, type: 'x' }), padded(record));
    }
    blocks.push(header({ name: split?.name ?? '', prefix: split?.prefix, size, mode: entry.mode, type: entry.kind === 'directory' ? '5' : '0' }));
    if (entry.kind === 'file') blocks.push(padded(entry.bytes));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}

/** gzip (RFC 1952) of `bytes`: no name, mtime 0, OS "unknown", the deflate stream of a fixed level. */
export function reproducibleGzip(bytes: Uint8Array): Buffer {
  // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=2 (best compression) OS=255 (unknown).
  const head = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(bytes), 0);
  trailer.writeUInt32LE(bytes.length % 2 ** 32, 4);
  return Buffer.concat([head, deflateSync(bytes, { level: GZIP_LEVEL, mem: GZIP_MEMORY }), trailer]);
}

/** The bytes of a gzip stream, at most `maxBytes` of them; IntegrityError when it is not gzip or is longer. */
export function gunzipLayer(bytes: Buffer, maxBytes: number): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    throw new IntegrityError(`the layer is not a gzip stream of at most ${maxBytes} bytes: ${(error as Error).message}`);
  }
}

/** Every entry of a tar, in its order; IntegrityError for a header that does not check out or a path that is not plain. */
export function readLayerTar(tar: Buffer): ReadEntry[] {
  const entries: ReadEntry[] = [];
  let longName: string | undefined;
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const block = tar.subarray(at, at + BLOCK);
    if (block.every((byte) => byte === 0)) return entries;
    const stored = octal(block, 148, 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
    if (stored !== sum) throw new IntegrityError(`tar header at byte ${at}: checksum ${stored}, computed ${sum}`);
    const size = octal(block, 124, 12);
    const type = String.fromCharCode(block[156]!) || '0';
    const body = tar.subarray(at + BLOCK, at + BLOCK + size);
    if (body.length !== size) throw new IntegrityError(`tar entry at byte ${at}: ${size} bytes announced, ${body.length} there`);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      longName = paxPath(body) ?? longName;
      continue;
    }
    const prefix = text(block, 345, 155);
    const name = longName ?? (prefix === '' ? text(block, 0, 100) : `${prefix}/${text(block, 0, 100)}`);
    longName = undefined;
    const path = name.replace(/^\.\//, '').replace(/\/$/, '');
    const relative = path === '.' ? '' : path;
    if (relative !== '' && !safeRelativePath(relative)) throw new IntegrityError(`the layer holds the path ${JSON.stringify(name)}, which is not a plain relative path`);
    const mode = octal(block, 100, 8) & 0o7777;
    if (type === '0' || type === '\0') entries.push({ path: relative, mode, kind: 'file', bytes: Buffer.from(body) });
    else if (type === '5') entries.push({ path: relative, mode, kind: 'directory' });
    else entries.push({ path: relative, mode, kind: 'other', type });
  }
  throw new IntegrityError('the tar ends without its closing blocks');
}

function header(fields: { name: string; prefix?: string | undefined; size: number; mode: number; type: string }): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(fields.name, 0, 100, 'utf8');
  writeOctal(block, 100, 8, fields.mode);
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, 0); // mtime
  block.write(fields.type, 156, 1, 'latin1');
  block.write('ustar\0', 257, 6, 'latin1');
  block.write('00', 263, 2, 'latin1');
  if (fields.prefix !== undefined) block.write(fields.prefix, 345, 155, 'utf8');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return block;
}

/** name (<= 100 bytes) and prefix (<= 155 bytes) split at a '/', or undefined when ustar cannot hold it. */
function ustarName(name: string): { name: string; prefix: string | undefined } | undefined {
  if (Buffer.byteLength(name) <= 100) return { name, prefix: undefined };
  // A directory's trailing '/' stays with its last name.
  for (let cut = name.indexOf('/'); cut > 0 && cut < name.length - 1; cut = name.indexOf('/', cut + 1)) {
    const prefix = name.slice(0, cut);
    const rest = name.slice(cut + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return { name: rest, prefix };
  }
  return undefined;
}

/** The PAX header entry's own name: fixed, from the path's last name (readers ignore it). */
function paxName(name: string): string {
  const last = name.replace(/\/$/, '').split('/').at(-1)!;
  return `PaxHeaders/${Buffer.from(last).subarray(0, 80).toString('utf8').replace(/\uFFFD/g, '')}`;
}

/** "LEN key=value\n", LEN counting itself. */
function paxRecord(key: string, value: string): Buffer {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest);
  while (String(length).length + Buffer.byteLength(rest) !== length) length = String(length).length + Buffer.byteLength(rest);
  return Buffer.from(`${length}${rest}`, 'utf8');
}

function paxPath(body: Buffer): string | undefined {
  let found: string | undefined;
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(body.toString('latin1', at, space));
    if (!Number.isSafeInteger(length) || length <= 0) throw new IntegrityError('a PAX record has no valid length');
    const record = body.toString('utf8', space + 1, at + length - 1);
    if (record.startsWith('path=')) found = record.slice('path='.length);
    at += length;
  }
  return found;
}

function padded(bytes: Buffer): Buffer {
  const rest = bytes.length % BLOCK;
  return rest === 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(BLOCK - rest)]);
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}

function octal(block: Buffer, offset: number, length: number): number {
  const field = text(block, offset, length).trim();
  const value = field === '' ? 0 : parseInt(field, 8);
  if (!Number.isSafeInteger(value) || !/^[0-7]*$/.test(field)) throw new IntegrityError(`a tar header field holds ${JSON.stringify(field)}, not an octal number`);
  return value;
}

function text(block: Buffer, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return field.toString('utf8', 0, end < 0 ? length : end);
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 gzip's trailer holds (zlib.crc32 is Node 20.15+; the project runs on any Node 20). */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
