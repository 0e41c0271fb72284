#!/usr/bin/env node
// A stdio MCP skills server that misbehaves on purpose, per URI, per method or at random
// (seeded). It speaks newline-delimited JSON-RPC itself instead of through the SDK's
// transport, so it can also write what no SDK would: garbage lines, malformed messages,
// answers that never come, endless cursors, notification storms, a closed stdout.
// Every request is logged on stderr as "request <method> <uri>" (the mount relays it).
//
// Why not scripted-server.mjs: that one tells its lies over the SDK's flawless transport
// (both eras); this one breaks the protocol itself, which the SDK cannot be made to do, and
// speaks only the 2025 handshake. Both read their scenario's skills and files through
// scenario-catalog.mjs.
//
// Scenario (JSON, path in argv[2]):
// { "listing": bool, "index": bool, "directoryRead": bool,
//   "skills": [{ "uri", "frontmatter", "dynamic"?, "inListing"? (default true),
//                "files": { "<uri>": FILE } }],
//   "extraFiles": { "<uri>": FILE },                  files outside any listed skill
//   "listingEntries": [raw entries],                 appended verbatim to skills/list
//   "listingFault": "not-array" | "wrong-types" | "missing-fields" | "duplicates" | "cursor-forever"
//                   | "huge" | "method-not-found" | "malformed-result",
//   "hugeEntries": N, "hugePageSize": N,              for "huge": N synthetic entries
//   "hugeFrontmatterBytes": N,                        each with ~N bytes of frontmatter (description + metadata)
//   "listingPageDelayMs": N,                          every skills/list page answered N ms late
//   "indexText": "raw text of skill://index.json",   overrides the generated index
//   "directories": { "<dir uri>": [raw children] | "method-not-found" },
//   "fuzz": { "seed": N, "badRate": 0..1, "statsFile": path }  random faults on reads
// }
// FILE: { "text"|"blob", "listedText"?, "listedDigest"?, "listedSize"?, "fault"?, "delayMs"? }
// File faults (resources/read of that URI): hang, slow (delayMs), invalid-base64,
// text-for-binary, several-contents, no-contents, other-uri, non-json, malformed-jsonrpc,
// wrong-id, method-not-found, wrong-result-type, storm (100 list_changed, then a good
// answer), close-stdout (stdout closed for good, the process stays alive), not-found (-32602:
// a listed file the server no longer serves), alternate (bytes that change between reads: one
// bit flipped on the 1st, 3rd, ... read of that URI, the listed bytes on the 2nd, 4th, ...).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { sha256 } from './digest.mjs';
import { prng } from './prng.mjs';
import { bytesOf, directoryChildren, listedBytes, manifestEntry } from './scenario-catalog.mjs';

const scenario = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const log = (line) => process.stderr.write(`${line}\n`);
// "repeat": N makes large files without large scenario files.
const expand = (file) => (file.repeat ? { ...file, text: (file.text ?? '').repeat(file.repeat), repeat: undefined } : file);

// ---- output: one JSON-RPC message per line, unless a fault says otherwise ----
let stdoutClosed = false;
function writeLine(line) {
  if (!stdoutClosed) process.stdout.write(`${line}\n`);
}
const send = (message) => writeLine(JSON.stringify({ jsonrpc: '2.0', ...message }));
const answer = (id, result) => send({ id, result });
const fail = (id, code, message) => send({ id, error: { code, message } });
const notFound = (id, uri) => fail(id, -32602, `unknown resource ${uri}`);

// ---- the catalog the scenario describes ----
const skills = scenario.skills ?? [];
const files = new Map();
for (const skill of skills) for (const [uri, file] of Object.entries(skill.files)) files.set(uri, (skill.files[uri] = expand(file)));
for (const [uri, file] of Object.entries(scenario.extraFiles ?? {})) files.set(uri, expand(file));

const entryOf = (skill) => manifestEntry(skill, skill.files);

if (scenario.index) {
  const index = {
    skills: skills
      .filter((skill) => skill.inListing !== false)
      .map((skill) => ({ url: skill.uri, digest: sha256(listedBytes(skill.files[skill.uri])), frontmatter: skill.frontmatter })),
  };
  files.set('skill://index.json', { text: scenario.indexText ?? JSON.stringify(index) });
}

// Seeded randomness (test/support/prng.mjs), so a fuzz session replays exactly.
const FUZZ_FAULTS = [
  'tampered', 'short', 'long', 'invalid-base64', 'several-contents', 'no-contents', 'other-uri', 'non-json',
  'malformed-jsonrpc', 'wrong-id', 'method-not-found', 'wrong-result-type', 'slow', 'hang', 'storm', 'server-error',
];
const random = scenario.fuzz ? prng(scenario.fuzz.seed) : undefined;
const stats = { requests: 0, faults: 0, byFault: {} };
function recordStats(fault) {
  stats.requests += 1;
  if (fault) {
    stats.faults += 1;
    stats.byFault[fault] = (stats.byFault[fault] ?? 0) + 1;
  }
  if (scenario.fuzz?.statsFile) {
    // A new file renamed over the old: the test reads it at any moment, never half-written.
    writeFileSync(`${scenario.fuzz.statsFile}.tmp`, JSON.stringify(stats));
    renameSync(`${scenario.fuzz.statsFile}.tmp`, scenario.fuzz.statsFile);
  }
}

/** The same length, one bit different (a byte more when there is none to flip). */
function tamper(bytes) {
  if (bytes.length === 0) return Buffer.from('x');
  const copy = Buffer.from(bytes);
  copy[0] ^= 1;
  return copy;
}

// ---- resources/read, with the URI's fault ----
function readResource(id, uri) {
  const file = files.get(uri);
  let fault = file?.fault;
  if (random && file && !fault && random() < scenario.fuzz.badRate) fault = FUZZ_FAULTS[Math.floor(random() * FUZZ_FAULTS.length)];
  recordStats(fault);
  if (!file) return notFound(id, uri);
  const bytes = bytesOf(file);
  const good = () => (file.blob !== undefined ? { uri, mimeType: 'application/octet-stream', blob: file.blob } : { uri, mimeType: 'text/markdown', text: file.text });
  if (fault) log(`fault ${fault} ${uri}`);
  switch (fault) {
    case undefined:
      return answer(id, { contents: [good()] });
    case 'tampered':
      return answer(id, { contents: [{ uri, blob: tamper(bytes).toString('base64') }] });
    case 'alternate':
      file.reads = (file.reads ?? 0) + 1;
      return answer(id, { contents: [file.reads % 2 === 0 ? good() : { uri, blob: tamper(bytes).toString('base64') }] });
    case 'short':
      return answer(id, { contents: [{ uri, blob: bytes.subarray(0, Math.max(0, bytes.length - 1)).toString('base64') }] });
    case 'long':
      return answer(id, { contents: [{ uri, blob: Buffer.concat([bytes, Buffer.from('\n')]).toString('base64') }] });
    case 'hang':
      return undefined;
    case 'slow':
      return void setTimeout(() => answer(id, { contents: [good()] }), file.delayMs ?? Math.floor((random?.() ?? 0.5) * 300));
    case 'invalid-base64':
      return answer(id, { contents: [{ uri, blob: 'this is *not* base64!' }] });
    case 'text-for-binary':
      return answer(id, { contents: [{ uri, text: bytes.toString('utf8') }] });
    case 'several-contents':
      return answer(id, { contents: [good(), good()] });
    case 'no-contents':
      return answer(id, { contents: [] });
    case 'other-uri':
      return answer(id, { contents: [{ ...good(), uri: [...files.keys()].find((other) => other !== uri) ?? `${uri}.other` }] });
    case 'non-json':
      return writeLine('this is not JSON {');
    case 'malformed-jsonrpc':
      return writeLine(JSON.stringify({ jsonrpc: '1.0', id, result: { contents: [good()] }, error: 'both' }));
    case 'wrong-id':
      return answer(typeof id === 'number' ? id + 1_000_000 : `${id}-other`, { contents: [good()] });
    case 'method-not-found':
      return fail(id, -32601, 'resources/read is not supported today');
    case 'not-found':
      return fail(id, -32602, `Resource not found: ${uri}`);
    case 'server-error':
      return fail(id, -32603, 'internal error');
    case 'wrong-result-type':
      return answer(id, { contents: 'not an array' });
    case 'storm':
      for (let i = 0; i < 100; i++) send({ method: 'notifications/resources/list_changed' });
      return answer(id, { contents: [good()] });
    case 'close-stdout':
      stdoutClosed = true;
      process.stdout.end();
      return undefined;
    default:
      throw new Error(`unknown fault ${fault}`);
  }
}

// ---- skills/list ----
function listPage(id, cursor) {
  recordStats(undefined);
  const entries = [...skills.filter((skill) => skill.inListing !== false).map(entryOf), ...(scenario.listingEntries ?? [])];
  switch (scenario.listingFault) {
    case 'not-array':
      return answer(id, { skills: 'everything' });
    case 'malformed-result':
      return writeLine('{"jsonrpc":"2.0","id":' + JSON.stringify(id) + ',"result":{"skills":[');
    case 'method-not-found':
      return fail(id, -32601, 'no skills/list here');
    case 'wrong-types':
      return answer(id, { skills: [...entries, 42, 'skill', null, { uri: 7, frontmatter: 'name: x', resources: {} }] });
    case 'missing-fields':
      return answer(id, { skills: [...entries, { uri: 'skill://no-frontmatter/SKILL.md', resources: [] }, { frontmatter: { name: 'no-uri', description: 'x' }, resources: [] }] });
    case 'duplicates':
      return answer(id, { skills: [...entries, ...entries] });
    case 'cursor-forever':
      // A fresh cursor every time, so only a page or item cap stops it.
      return answer(id, { skills: cursor === undefined ? entries : [], nextCursor: `page-${Number((cursor ?? 'page-0').slice(5)) + 1}` });
    case 'huge': {
      const total = scenario.hugeEntries ?? 1_000_000;
      const pageSize = scenario.hugePageSize ?? 10_000;
      const start = cursor === undefined ? 0 : Number(cursor);
      const page = [];
      for (let i = start; i < Math.min(total, start + pageSize); i++) {
        const name = `s${i}`;
        const uri = `skill://huge/${name}/SKILL.md`;
        page.push({ uri, frontmatter: hugeFrontmatter(name, i, scenario.hugeFrontmatterBytes ?? 0), resources: [{ uri, digest: sha256(Buffer.from(name)), size: name.length }] });
      }
      const next = start + pageSize < total ? String(start + pageSize) : undefined;
      return answer(id, { skills: start === 0 ? [...entries, ...page] : page, ...(next ? { nextCursor: next } : {}) });
    }
    default:
      return answer(id, { skills: entries });
  }
}

/** Frontmatter of about `bytes` bytes: half a (legal, at most 1,024-character) description, half metadata. */
function hugeFrontmatter(name, i, bytes) {
  if (bytes === 0) return { name, description: `skill ${i}` };
  const description = `skill ${i} `.padEnd(Math.min(1_000, Math.floor(bytes / 2)), 'd');
  return { name, description, metadata: { notes: `${i}`.padEnd(Math.max(0, bytes - description.length), 'm') } };
}

function getSkill(id, uri) {
  recordStats(undefined);
  const skill = skills.find((candidate) => candidate.uri === uri);
  if (!skill) return notFound(id, uri);
  return answer(id, { skill: entryOf(skill) });
}

// ---- resources/directory/read ----
function readDirectory(id, uri) {
  recordStats(undefined);
  const scripted = scenario.directories?.[uri];
  if (scripted === 'method-not-found') return fail(id, -32601, 'directory reads are not supported after all');
  if (scripted) return answer(id, { resources: scripted });
  const children = directoryChildren(files, uri);
  if (children.length === 0) return notFound(id, uri);
  return answer(id, { resources: children });
}

// ---- dispatch ----
const capabilities = {
  resources: {},
  extensions: { 'io.modelcontextprotocol/skills': scenario.directoryRead ? { directoryRead: true } : {} },
};

function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return; // notifications (initialized, cancelled)
  const uri = params?.uri;
  log(`request ${method}${uri ? ` ${uri}` : ''}`);
  switch (method) {
    case 'initialize':
      return answer(id, { protocolVersion: params.protocolVersion, capabilities, serverInfo: { name: 'hostile', version: '1.0.0' } });
    case 'ping':
      return answer(id, {});
    case 'resources/read':
      return readResource(id, uri);
    case 'skills/list':
      if (!scenario.listing) return fail(id, -32601, 'Method not found');
      if (scenario.listingPageDelayMs) return void setTimeout(() => listPage(id, params?.cursor), scenario.listingPageDelayMs);
      return listPage(id, params?.cursor);
    case 'skills/get':
      if (!scenario.listing) return fail(id, -32601, 'Method not found');
      return getSkill(id, uri);
    case 'resources/directory/read':
      if (!scenario.directoryRead && !scenario.directories) return fail(id, -32601, 'Method not found');
      return readDirectory(id, uri);
    default:
      return fail(id, -32601, 'Method not found');
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  handle(message);
});
process.stdin.on('end', () => process.exit(0));
process.stdout.on('error', () => undefined);
