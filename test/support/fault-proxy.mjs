#!/usr/bin/env node
// A stdio MCP server wrapper for fault tests: sits between the mount and a real server
// (skills-serve), and can delay every JSON-RPC message from the client, swallow the
// requests matching a pattern (a server that never answers), or refuse to start.
//
//   node fault-proxy.mjs [--delay-ms N] [--drop REGEX] [--gate FILE] [--die-after N] -- COMMAND [ARGS...]
//
// --delay-ms N   forward each client message N ms after it arrived (order kept): a server
//                answering in N ms per request.
// --drop REGEX   never forward a client message whose JSON text matches (it is never answered).
// --gate FILE    while FILE exists, exit 1 at start instead of serving (a server that
//                cannot come back), so tests can hold a restarted server down.
// --die-after N  kill the server and exit 1 right after forwarding N client messages
//                (2 = initialize + initialized: a server that crashes once connected).
// The server's stdout is piped through unchanged; its stderr is inherited. Killing this
// process (even with SIGKILL) closes the server's stdin, so the server exits too.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const separator = process.argv.indexOf('--');
if (separator < 0 || separator === process.argv.length - 1) {
  process.stderr.write('usage: fault-proxy.mjs [--delay-ms N] [--drop REGEX] [--gate FILE] [--die-after N] -- COMMAND [ARGS...]\n');
  process.exit(2);
}
const { values } = parseArgs({
  args: process.argv.slice(2, separator),
  options: { 'delay-ms': { type: 'string' }, drop: { type: 'string' }, gate: { type: 'string' }, 'die-after': { type: 'string' } },
});
const [command, ...args] = process.argv.slice(separator + 1);
const delayMs = Number(values['delay-ms'] ?? 0);
const dieAfter = values['die-after'] === undefined ? Infinity : Number(values['die-after']);
const drop = values.drop ? new RegExp(values.drop) : undefined;
const log = (line) => process.stderr.write(`fault-proxy: ${line}\n`);

if (values.gate && existsSync(values.gate)) {
  log(`gate ${values.gate} is closed: not starting`);
  process.exit(1);
}

const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
server.on('error', (error) => {
  log(`cannot start ${command}: ${error.message}`);
  process.exit(1);
});
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
server.stdout.pipe(process.stdout);
// A dead server must not take us down with EPIPE before its exit is reported.
server.stdin.on('error', () => undefined);
process.stdout.on('error', () => process.exit(1));

let pending = 0;
let forwarded = 0;
let inputEnded = false;
const forward = (line) => {
  server.stdin.write(`${line}\n`);
  pending -= 1;
  forwarded += 1;
  if (forwarded >= dieAfter) {
    // Let the server answer what it has (the client sees a connection that works), then die.
    setTimeout(() => {
      log(`dying after ${forwarded} messages`);
      server.kill('SIGKILL');
      process.exit(1);
    }, 50);
  }
  if (inputEnded && pending === 0) server.stdin.end();
};
createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (drop?.test(line)) {
      log(`dropped ${line.slice(0, 200)}`);
      return;
    }
    pending += 1;
    if (delayMs > 0) setTimeout(forward, delayMs, line);
    else forward(line);
  })
  .on('close', () => {
    inputEnded = true;
    if (pending === 0) server.stdin.end();
  });

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.kill(signal);
    setTimeout(() => process.exit(1), 2_000).unref();
  });
}
