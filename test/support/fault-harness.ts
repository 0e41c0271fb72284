// Helpers for fault, memory and load tests: servers wrapped in the fault proxy, the
// daemon's children and its peak memory, and skills.json read through the mount (always
// from a child process). HTTP servers that die and come back: http-server.ts.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { run } from './fuse-harness.js';
import { REPO, SKILLS_SERVE } from './mount-harness.js';

export const FAULT_PROXY = path.join(REPO, 'test', 'support', 'fault-proxy.mjs');

export interface ProxyOptions {
  delayMs?: number;
  /** Client messages matching this are never forwarded, so never answered. */
  drop?: string;
  /** While this file exists, the server refuses to start. */
  gate?: string;
  /** The server is killed right after this many client messages. */
  dieAfter?: number;
}

/** A stdio config entry: skills-serve on `dir` (with `flags`) behind the fault proxy. */
export function proxiedServeEntry(dir: string, options: ProxyOptions, ...flags: string[]) {
  const proxyArgs: string[] = [];
  if (options.delayMs !== undefined) proxyArgs.push('--delay-ms', String(options.delayMs));
  if (options.drop !== undefined) proxyArgs.push('--drop', options.drop);
  if (options.gate !== undefined) proxyArgs.push('--gate', options.gate);
  if (options.dieAfter !== undefined) proxyArgs.push('--die-after', String(options.dieAfter));
  return { command: process.execPath, args: [FAULT_PROXY, ...proxyArgs, '--', process.execPath, SKILLS_SERVE, dir, ...flags] };
}

/** Direct children of `pid` whose command line matches `pattern`. */
export async function childPids(pid: number, pattern: RegExp = /./): Promise<number[]> {
  const result = await run('ps', ['-o', 'pid=,args=', '--ppid', String(pid)]);
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && pattern.test(line))
    .map((line) => Number(line.split(/\s+/, 1)[0]));
}

/** Peak resident set size (VmHWM) of a live process, in bytes. */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export interface SkillsJsonServerState {
  label: string;
  state: string;
  reason?: string;
}

/** The servers of MOUNTPOINT/skills.json, read with cat (never from this process's own fs calls). */
export async function serverStates(mountpoint: string): Promise<SkillsJsonServerState[]> {
  const result = await run('cat', [path.join(mountpoint, 'skills.json')]);
  if (result.code !== 0) throw new Error(`cat skills.json failed: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { servers: SkillsJsonServerState[] }).servers;
}

/** Runs `fn` and returns how long it took, in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; elapsedMs: number }> {
  const startedAt = performance.now();
  const value = await fn();
  return { value, elapsedMs: performance.now() - startedAt };
}
