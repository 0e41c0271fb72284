// The SkillSource contract (test/support/skill-source-contract.ts) run against the in-memory
// fake and against McpSkillSource talking to skills-serve over stdio on a temp directory,
// pinned to each protocol revision, in the server's default mode and in its index mode.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import type { SourceFeatures } from '../../src/mcp/skill-source.js';
import { LEGACY_REVISION, MODERN_REVISION } from '../../src/protocol/revisions.js';
import { MemorySkillSource } from '../support/memory-skill-source.js';
import { CLI } from '../support/server-harness.js';
import { describeSkillSourceContract, type ContractExpectations, type ContractFixtureFactory } from '../support/skill-source-contract.js';

/** What skills-serve declares on stdio: change events on a channel that is always there. */
const SERVED_FEATURES: SourceFeatures = { extension: true, directoryRead: true, subscribe: true, listChanged: true, liveChannel: true };
/** skills-serve's default --ttl and --cache-scope, sent on 2026-07-28 only. */
const SERVED_HINT = { ttlMs: 30_000, cacheScope: 'private' as const };

interface Mode {
  protocolVersion: typeof MODERN_REVISION | typeof LEGACY_REVISION;
  /** skills-serve --protocol index --no-directory-read: the seed generation, without directory reads. */
  indexOnly: boolean;
}

function expectationsFor({ protocolVersion, indexOnly }: Mode): ContractExpectations {
  return {
    protocolVersion,
    features: { ...SERVED_FEATURES, directoryRead: !indexOnly },
    listing: !indexOnly,
    index: true,
    cacheHint: protocolVersion === MODERN_REVISION && !indexOnly ? SERVED_HINT : {},
  };
}

/** The fake, set up to serve the tree as skills-serve would in `mode`. */
function memoryFixture(mode: Mode): ContractFixtureFactory {
  return async (tree) => {
    const expected = expectationsFor(mode);
    const source = new MemorySkillSource('contract');
    source.featureFlags = { ...expected.features };
    source.status = { status: 'connected', protocolVersion: mode.protocolVersion };
    source.hint = { ...expected.cacheHint };
    source.generations = { listing: expected.listing, index: expected.index };
    source.serveTree(tree);
    return {
      source,
      expected,
      writeFile: async (path, content) => source.writeTreeFile(path, content),
      removeFile: async (path) => source.removeTreeFile(path),
      close: async () => {},
    };
  };
}

/** skills-serve on a temp copy of the tree, as a child process on stdio, and McpSkillSource pinned to one revision. */
function stdioFixture(mode: Mode): ContractFixtureFactory {
  return async (tree) => {
    const dir = await mkdtemp(join(tmpdir(), 'skills-contract-'));
    const put = async (path: string, content: string | Uint8Array) => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    };
    for (const [path, bytes] of tree) await put(path, bytes);
    const logs: string[] = [];
    const flags = mode.indexOnly ? ['--protocol', 'index', '--no-directory-read'] : [];
    const source = new McpSkillSource(
      'contract',
      { kind: 'stdio', command: process.execPath, args: [CLI, dir, ...flags], env: {}, cwd: undefined },
      { timeoutMs: 10_000, protocolVersion: mode.protocolVersion, log: (line) => logs.push(line) },
    );
    const close = async () => {
      await source.close();
      await rm(dir, { recursive: true, force: true });
    };
    await source.start();
    if (source.connection().status !== 'connected') {
      await close();
      throw new Error(`skills-serve did not connect: ${JSON.stringify(source.connection())}\n${logs.join('\n')}`);
    }
    return {
      source,
      expected: expectationsFor(mode),
      writeFile: put,
      removeFile: (path) => rm(join(dir, path)),
      close,
    };
  };
}

const MODES: Array<{ label: string; mode: Mode }> = [
  { label: `${MODERN_REVISION}, skills-serve defaults`, mode: { protocolVersion: MODERN_REVISION, indexOnly: false } },
  { label: `${LEGACY_REVISION}, skills-serve defaults`, mode: { protocolVersion: LEGACY_REVISION, indexOnly: false } },
  { label: `${LEGACY_REVISION}, index generation without directoryRead`, mode: { protocolVersion: LEGACY_REVISION, indexOnly: true } },
  { label: `${MODERN_REVISION}, index generation without directoryRead`, mode: { protocolVersion: MODERN_REVISION, indexOnly: true } },
];

for (const { label, mode } of MODES) {
  describeSkillSourceContract(`MemorySkillSource (${label})`, memoryFixture(mode));
  describeSkillSourceContract(`McpSkillSource over stdio (${label})`, stdioFixture(mode));
}
