// What the benchmark ran on: cores, CPU model, kernel, Node, load. Read from /proc.
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** A description of this machine for results.json and docs/benchmarks.md. */
export function describeMachine() {
  const cpuinfo = safeRead('/proc/cpuinfo');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: model,
    kernel: os.release(),
    node: process.version,
    memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    loadAverage: os.loadavg().map((load) => Number(load.toFixed(2))),
  };
}

function safeRead(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
