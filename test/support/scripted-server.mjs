#!/usr/bin/env node
// A stdio MCP skills server that serves exactly what a scenario file says, including
// lies: manifests whose digest, size or frontmatter disagree with the bytes it serves.
// Every request is logged on stderr as "request <method> <uri>" so tests can count them.
//
// Why not hostile-server.mjs: this one lies only about content, over a flawless protocol:
// the SDK's own stdio transport, both eras (2026-07-28 server/discover as well as the 2025
// handshake, which is all hostile-server speaks), so what it tests is verification on the
// path real servers take. Wire-level misbehaviour belongs in hostile-server.mjs. Both read
// their scenario's skills and files through scenario-catalog.mjs.
//
// Scenario (JSON, path in argv[2]):
// { "directoryRead": bool, "listing": bool, "index": bool,
//   "skills": [{ "uri", "frontmatter", "dynamic"?: bool, "inListing"?: bool (default true),
//                "files": { "<uri>": { "text"? , "blob"? (base64), "listedText"?, "listedDigest"?, "listedSize"? } },
//                "getFiles"?: same shape, used by skills/get instead of "files" (a skill updated since the listing) }],
//   "extraFiles": { "<uri>": { "text"|"blob" } },
//   "syntheticSkills": N,            N more skills, skill://synthetic/sNNNNN/SKILL.md, one file each
//   "listingDelayMs": N,             every skills/list answered N ms late
//   "listChanged": bool,             declares resources.listChanged
//   "storm": { "perSecond", "durationMs", "startAfterMs"?, "addsSkill"? },  list_changed notifications,
//                                    from startAfterMs (default 500) after the first skills/list answer
//                                    (2025: unsolicited; 2026-07-28: on the listen stream); at its end
//                                    the skill skill://<addsSkill>/SKILL.md is added and announced once more
//   "listenEndsAfterMs": N,          each subscriptions/listen acknowledged, then ended by the
//                                    server N ms later (its final result); logged "request subscriptions/listen"
//   "keepRunningAfterStdinEnds": bool, "ignoreSigterm": bool   a server that is hard to stop
//   "sayPid": bool                   logs "pid N" (so do the two above) }
import { readFileSync } from 'node:fs';
import { ProtocolError, ProtocolErrorCode, Server, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { sha256 } from './digest.mjs';
import { directoryChildren, listedBytes, manifestEntry } from './scenario-catalog.mjs';

const scenario = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const log = (line) => process.stderr.write(`${line}\n`);

for (let i = 0; i < (scenario.syntheticSkills ?? 0); i++) {
  const name = `s${String(i).padStart(5, '0')}`;
  const uri = `skill://synthetic/${name}/SKILL.md`;
  const description = `synthetic skill ${i}`;
  (scenario.skills ??= []).push({ uri, frontmatter: { name, description }, files: { [uri]: { text: `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n` } } });
}
if (scenario.ignoreSigterm) process.on('SIGTERM', () => log('SIGTERM ignored'));
if (scenario.keepRunningAfterStdinEnds) setInterval(() => undefined, 1_000);
if (scenario.ignoreSigterm || scenario.keepRunningAfterStdinEnds || scenario.sayPid) log(`pid ${process.pid}`);
// A storm's sends wait on a full pipe together: that is backpressure, not a leak.
if (scenario.storm) process.stdout.setMaxListeners(0);

const allFiles = new Map();
for (const skill of scenario.skills ?? []) for (const [uri, file] of Object.entries(skill.getFiles ?? skill.files)) allFiles.set(uri, file);
for (const [uri, file] of Object.entries(scenario.extraFiles ?? {})) allFiles.set(uri, file);
if (scenario.index) {
  const index = {
    skills: (scenario.skills ?? [])
      .filter((skill) => skill.inListing !== false)
      .map((skill) => {
        const file = skill.files[skill.uri];
        return { url: skill.uri, digest: file.listedDigest ?? sha256(listedBytes(file)), frontmatter: skill.frontmatter };
      }),
  };
  allFiles.set('skill://index.json', { text: JSON.stringify(index) });
}

const extension = scenario.directoryRead ? { directoryRead: true } : {};
const McpError = ProtocolError;
const ErrorCode = ProtocolErrorCode;
const Params = z.looseObject({});
const UriParams = z.looseObject({ uri: z.string() });

// The low-level Server on purpose: the SDK's SkillsExtension would refuse the lies it tells.
// Both eras, like skills-serve: serveStdio pins one instance per connection.
function build() {
  const server = new Server(
    { name: 'scripted', version: '1.0.0' },
    { capabilities: { resources: scenario.listChanged ? { listChanged: true } : {}, extensions: { 'io.modelcontextprotocol/skills': extension } } },
  );
  live = server;

  server.setRequestHandler('resources/read', (request) => {
    const { uri } = request.params;
    log(`request resources/read ${uri}`);
    const file = allFiles.get(uri);
    if (!file) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}`, { uri });
    return { contents: [file.blob !== undefined ? { uri, blob: file.blob } : { uri, text: file.text }] };
  });

  if (scenario.listing) {
    server.setRequestHandler('skills/list', { params: Params }, async () => {
      log('request skills/list');
      if (scenario.listingDelayMs) await new Promise((resolve) => setTimeout(resolve, scenario.listingDelayMs));
      listing ??= (scenario.skills ?? []).filter((skill) => skill.inListing !== false).map((skill) => manifestEntry(skill, skill.files));
      if (scenario.storm && !stormStarted) {
        stormStarted = true;
        setTimeout(startStorm, scenario.storm.startAfterMs ?? 500);
      }
      return { skills: listing };
    });
    server.setRequestHandler('skills/get', { params: UriParams }, ({ uri }) => {
      log(`request skills/get ${uri}`);
      const skill = (scenario.skills ?? []).find((candidate) => candidate.uri === uri);
      if (!skill) throw new McpError(ErrorCode.InvalidParams, `not a skill: ${uri}`, { uri });
      return { skill: manifestEntry(skill, skill.getFiles ?? skill.files) };
    });
  }

  if (scenario.directoryRead) {
    server.setRequestHandler(
      'resources/directory/read',
      { params: UriParams },
      ({ uri }) => {
        log(`request resources/directory/read ${uri}`);
        const children = directoryChildren(allFiles, uri);
        if (children.length === 0) throw new McpError(ErrorCode.InvalidParams, `not a directory: ${uri}`, { uri });
        return { resources: children };
      },
    );
  }

  // Methods the scenario does not offer are logged too, so tests can prove they were never called.
  server.fallbackRequestHandler = async (request) => {
    log(`request ${request.method} (not offered)`);
    throw new McpError(ErrorCode.MethodNotFound, `method not found: ${request.method}`);
  };

  return server;
}

/** The instance serving the connection now (the last one built: the probe's is discarded). */
let live;
let listing;
let stormStarted = false;

function startStorm() {
  const { perSecond, durationMs } = scenario.storm;
  const perTick = Math.max(1, Math.round(perSecond / 100));
  const endsAt = Date.now() + durationMs;
  let sent = 0;
  let busy = false;
  log(`storm started: ${perSecond} list_changed a second for ${durationMs} ms`);
  const timer = setInterval(() => {
    // A tick whose predecessor still waits on a full pipe is skipped: the client's pace is the limit.
    if (busy) return;
    if (Date.now() >= endsAt) {
      clearInterval(timer);
      if (scenario.storm.addsSkill) {
        const name = scenario.storm.addsSkill;
        const uri = `skill://${name}/SKILL.md`;
        const skill = { uri, frontmatter: { name, description: 'added at the end of the storm' }, files: { [uri]: { text: `---\nname: ${name}\ndescription: added at the end of the storm\n---\n` } } };
        scenario.skills.push(skill);
        allFiles.set(uri, skill.files[uri]);
        listing = undefined;
        void live?.sendResourceListChanged().catch(() => undefined);
        sent += 1;
      }
      log(`storm ended: ${sent} notifications sent`);
      return;
    }
    busy = true;
    const sends = [];
    for (let i = 0; i < perTick; i++) sends.push(live?.sendResourceListChanged().catch(() => undefined));
    sent += perTick;
    void Promise.all(sends).finally(() => (busy = false));
  }, 10);
}

/** The stdio wire, watching for listen acknowledgements: counted, and ended soon when the scenario says so. */
class WatchedTransport extends StdioServerTransport {
  async send(message, options) {
    if (message.method === 'notifications/subscriptions/acknowledged') {
      log('request subscriptions/listen');
      const id = message.params?._meta?.[SUBSCRIPTION_ID_META_KEY];
      if (scenario.listenEndsAfterMs !== undefined && id !== undefined) {
        // The spec's graceful close: the listen request's own (empty) result.
        setTimeout(() => void super.send({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: id } } }).catch(() => undefined), scenario.listenEndsAfterMs);
      }
    }
    return super.send(message, options);
  }
}

serveStdio(build, { transport: new WatchedTransport() });
