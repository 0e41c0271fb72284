// The layer's bytes: a tar any tar reads (GNU tar here), entries sorted with a folder before what
// it holds, owner 0:0 and mtime 0 whatever the order given; a name longer than ustar holds kept
// whole (a PAX path record, no time); gzip with no name or time; read back as written.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gunzipLayer, layerTar, readLayerTar, reproducibleGzip, type LayerEntry } from '../../src/snapshot/layer-tar.js';

const LONG = `${'a'.repeat(120)}/${'b'.repeat(120)}/${'c'.repeat(120)}.md`;
const entries: LayerEntry[] = [
  { path: 'skill/scripts/run.sh', mode: 0o555, kind: 'file', bytes: Buffer.from('#!/bin/sh\necho run\n') },
  { path: 'skill', mode: 0o555, kind: 'directory' },
  { path: LONG, mode: 0o444, kind: 'file', bytes: Buffer.from('long\n') },
  { path: '', mode: 0o555, kind: 'directory' },
  { path: 'skill/scripts', mode: 0o555, kind: 'directory' },
  { path: 'skill/SKILL.md', mode: 0o444, kind: 'file', bytes: Buffer.from('---\nname: skill\n---\n') },
];

describe('the layer tar', () => {
  it('is the same bytes in any order given, and GNU tar lists it sorted, 0/0, at the epoch, a long name whole', async () => {
    const tar = layerTar(entries);
    expect(layerTar([...entries].reverse()).equals(tar)).toBe(true);
    const dir = await mkdtemp(path.join(tmpdir(), 'skills-mount-tar-'));
    try {
      await writeFile(path.join(dir, 'layer.tar'), tar);
      const listed = spawnSync('tar', ['--numeric-owner', '--full-time', '-tvf', path.join(dir, 'layer.tar')], { encoding: 'utf8' });
      expect(listed.status, listed.stderr).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines.map((line) => line.split(/\s+/).at(-1))).toEqual(['./', LONG, 'skill/', 'skill/SKILL.md', 'skill/scripts/', 'skill/scripts/run.sh']);
      for (const line of lines) expect(line).toMatch(/^[-d]r-[-x]r-[-x]r-[-x] 0\/0 +\d+ 1970-01-01 00:00:00 /);
      expect(tar.includes(Buffer.from('mtime='))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads back as written: paths, modes, bytes', () => {
    const read = readLayerTar(layerTar(entries));
    expect(read.map((entry) => [entry.path, entry.kind, entry.mode.toString(8)])).toEqual([
      ['', 'directory', '555'],
      [LONG, 'file', '444'],
      ['skill', 'directory', '555'],
      ['skill/SKILL.md', 'file', '444'],
      ['skill/scripts', 'directory', '555'],
      ['skill/scripts/run.sh', 'file', '555'],
    ]);
    const script = read.find((entry) => entry.path === 'skill/scripts/run.sh');
    expect(script?.kind === 'file' && script.bytes.toString()).toBe('#!/bin/sh\necho run\n');
  });

  it('refuses a header whose checksum does not hold, and a path that climbs out', () => {
    const tar = layerTar(entries);
    tar[0]! ^= 0x01;
    expect(() => readLayerTar(tar)).toThrow(/checksum/);
    expect(() => layerTar([{ path: '../x', mode: 0o444, kind: 'file', bytes: Buffer.alloc(0) }])).toThrow(/cannot hold the path/);
  });
});

describe('the gzip', () => {
  it('has no name, mtime 0, and the same bytes every time; gunzip gives the tar back', () => {
    const tar = layerTar(entries);
    const gzipped = reproducibleGzip(tar);
    expect([...gzipped.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
    expect(reproducibleGzip(tar).equals(gzipped)).toBe(true);
    expect(gunzipLayer(gzipped, 1 << 20).equals(tar)).toBe(true);
    expect(() => gunzipLayer(gzipped, 100)).toThrow(/at most 100 bytes/);
  });
});
