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
//   "extraFiles": { "<uri>": { "text"|"blob" } } }
import { readFileSync } from 'node:fs';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { sha256 } from './digest.mjs';
import { directoryChildren, listedBytes, manifestEntry } from './scenario-catalog.mjs';

const scenario = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const log = (line) => process.stderr.write(`${line}\n`);

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
    { capabilities: { resources: {}, extensions: { 'io.modelcontextprotocol/skills': extension } } },
  );

  server.setRequestHandler('resources/read', (request) => {
    const { uri } = request.params;
    log(`request resources/read ${uri}`);
    const file = allFiles.get(uri);
    if (!file) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}`, { uri });
    return { contents: [file.blob !== undefined ? { uri, blob: file.blob } : { uri, text: file.text }] };
  });

  if (scenario.listing) {
    server.setRequestHandler('skills/list', { params: Params }, () => {
      log('request skills/list');
      return { skills: (scenario.skills ?? []).filter((skill) => skill.inListing !== false).map((skill) => manifestEntry(skill, skill.files)) };
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

serveStdio(build);
