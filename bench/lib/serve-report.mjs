// The serve rows (workloads/serve.mjs, issue 51): a warm and a cold read pass through the gateway
// against the same pass straight from its upstream, the ratio taken within the same runs; N clients
// at once through the gateway: reads per second and latency against the upstream's, errors and
// wrong bytes (both must be 0), and the gateway's resident memory.
import { median } from './stats.mjs';
import { formatValue, ratioRow, row } from './table.mjs';

const MB = 1e6;
const MIB = 1024 * 1024;
/** issue 51: a warm read answers from verified memory (at most the upstream's time), a cold one at most 1.3 x. */
const WARM_MAX_RATIO = 1.0;
const COLD_MAX_RATIO = 1.3;

/** Rows serve/warm, serve/cold, serve/concurrent, serve/concurrent-latency, serve/rss. */
export function buildServeRows(serve) {
  const { samples, concurrent, files, totalBytes, clients, readsPerClient, name } = serve;
  const label = `${name}, ${files.toLocaleString('en')} files, ${(totalBytes / MB).toFixed(1)} MB`;
  const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / files, 'ms')}/file)`;
  const pass = (phase) => {
    const measured = median(samples[phase]);
    const baseline = median(samples[`${phase}Upstream`]);
    return { unit: 'ms', measured, baseline, measuredText: perFile(measured), baselineText: perFile(baseline), samples: { measured: samples[phase], baseline: samples[`${phase}Upstream`] } };
  };
  const client = `the SDK client pinned to ${serve.protocol}, Streamable HTTP on loopback, \`resources/read\` of every listed file one at a time`;
  const { gateway, upstream } = concurrent;
  const reads = `${clients} clients at once, ${readsPerClient} reads each (${gateway.reads.toLocaleString('en')} reads)`;
  return [
    ratioRow({ id: 'serve/warm', workload: `warm read through \`skills-mount serve --http --all\` (${label}): ${client}, a second pass; vs the same pass straight from the upstream skills-serve --http`, maxRatio: WARM_MAX_RATIO, ...pass('warm') }),
    ratioRow({ id: 'serve/cold', workload: `cold read: a new \`serve\`, \`--no-disk-cache\`, the first pass (each file fetched upstream and verified); vs the first pass straight from the upstream`, maxRatio: COLD_MAX_RATIO, ...pass('cold') }),
    row({ id: 'serve/concurrent', workload: `${reads} through a warm gateway, every answer compared with the file on disk; vs the same straight from the upstream`, unit: 'reads/s',
      measured: gateway.readsPerSecond, baseline: upstream.readsPerSecond, ratio: gateway.readsPerSecond / upstream.readsPerSecond,
      measuredText: `${gateway.readsPerSecond.toFixed(0)} reads/s, ${gateway.errors} errors, ${gateway.wrong} wrong`, baselineText: `${upstream.readsPerSecond.toFixed(0)} reads/s, ${upstream.errors} errors, ${upstream.wrong} wrong`,
      target: '0 errors, 0 wrong bytes', met: gateway.errors === 0 && gateway.wrong === 0, ...(gateway.firstError && { detail: gateway.firstError }) }),
    row({ id: 'serve/concurrent-latency', workload: `the same reads' latency, p50 (p99)`, unit: 'ms', measured: gateway.p50Ms, baseline: upstream.p50Ms, ratio: gateway.p50Ms / upstream.p50Ms,
      measuredText: `${formatValue(gateway.p50Ms, 'ms')} (${formatValue(gateway.p99Ms, 'ms')})`, baselineText: `${formatValue(upstream.p50Ms, 'ms')} (${formatValue(upstream.p99Ms, 'ms')})` }),
    row({ id: 'serve/rss', workload: `the gateway's resident memory while the ${clients} clients read (peak of 50 ms samples; its high-water mark since start)`, unit: 'MiB',
      measured: gateway.rssPeakBytes / MIB, measuredText: `${(gateway.rssPeakBytes / MIB).toFixed(0)} MiB (${(gateway.rssHighWaterBytes / MIB).toFixed(0)} MiB)` }),
  ];
}
