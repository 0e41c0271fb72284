// The daemon's metrics as a scrape shows them: events from the FUSE, MCP, verification and
// cache hooks become the documented series; server state and skills are read at scrape time;
// hostile values cannot grow the number of series; label values are escaped; and promtool
// accepts the whole text.
import { SdkError, ProtocolError as SdkProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { LimitExceededError, NotFoundError, NotSupportedError, ProtocolError, UnavailableError } from '../../src/errors.js';
import { requestOutcome } from '../../src/mcp/request-observer.js';
import { errnoName, SERVER_STATES } from '../../src/metrics/metric-labels.js';
import { MountMetrics, type WatchedCatalog } from '../../src/metrics/index.js';
import type { ConnectionStatus } from '../../src/mcp/skill-source.js';
import type { VerificationFailureReason } from '../../src/catalog/server-catalog.js';
import { failIfMissing, promtoolCheck, skipWithoutTools } from '../support/prometheus-tools.js';

/** Every sample line of the text as series -> value ("name{labels}" as printed). */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    map.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return map;
}

/** How many series of the metric `name` (histogram buckets counted per bucket). */
function seriesOf(text: string, name: string): string[] {
  return [...samples(text).keys()].filter((series) => series === name || series.startsWith(`${name}{`));
}

function catalog(label: string, connection: ConnectionStatus, counts: { skills: number; declined?: number; rejected?: number; offline?: boolean }): WatchedCatalog {
  return {
    health: () => ({
      label,
      connection,
      offline: counts.offline ? { since: '2025-01-01T00:00:00.000Z', listingSavedAt: null } : null,
      skills: counts.skills,
      declined: counts.declined ?? 0,
      rejected: counts.rejected ?? 0,
    }),
  };
}

describe('the metrics registry', () => {
  it('counts FUSE operations by op and errno name, times them, and tracks those in flight', async () => {
    const metrics = new MountMetrics({ servers: ['demo'], processMetrics: false });
    const fuse = metrics.fuseObserver;
    for (let i = 0; i < 3; i++) fuse.started('read');
    fuse.started('lookup');
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_operations_in_flight')).toBe(4);
    fuse.finished('read', 0, 0.0004);
    fuse.finished('read', 0, 0.002);
    fuse.finished('read', 5, 0.01); // EIO
    fuse.finished('lookup', 2, 0.0001); // ENOENT
    values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_operations_in_flight')).toBe(0);
    expect(values.get('skills_mount_fuse_operations_total{op="read",errno="OK"}')).toBe(2);
    expect(values.get('skills_mount_fuse_operations_total{op="read",errno="EIO"}')).toBe(1);
    expect(values.get('skills_mount_fuse_operations_total{op="lookup",errno="ENOENT"}')).toBe(1);
    expect(values.get('skills_mount_fuse_operation_duration_seconds_count{op="read"}')).toBe(3);
    expect(values.get('skills_mount_fuse_operation_duration_seconds_sum{op="read"}')).toBeCloseTo(0.0124, 6);
    expect(values.get('skills_mount_fuse_operation_duration_seconds_bucket{le="0.0005",op="read"}')).toBe(1);
    expect(values.get('skills_mount_fuse_operation_duration_seconds_bucket{le="+Inf",op="read"}')).toBe(3);
  });

  it('counts the opens and releases the libfuse 3 addon answered itself, read at each scrape, as a counter that never goes back', async () => {
    const metrics = new MountMetrics({ servers: ['demo'], processMetrics: false });
    let answered: { opens: number; releases: number; reads: number } | undefined;
    metrics.watch({ catalogs: () => [], caches: () => ({}), answeredByAddon: () => answered });
    // Before the mount exists (and on libfuse 2): no series.
    expect(seriesOf(await metrics.text(), 'skills_mount_fuse_answered_by_addon_total')).toEqual([]);
    answered = { opens: 5, releases: 3, reads: 4 };
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="open"}')).toBe(5);
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="release"}')).toBe(3);
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="read"}')).toBe(4);
    answered = { opens: 9, releases: 9, reads: 4 };
    values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="open"}')).toBe(9);
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="release"}')).toBe(9);
  });

  it("counts the lookups, getattrs and listings the addon answered from its table, and shows the table's size, limit, peak and evictions", async () => {
    const metrics = new MountMetrics({ servers: ['demo'], processMetrics: false });
    const table = { entries: 120, directories: 7, limit: 65_536, peakEntries: 300, evictions: 2 };
    let answered = { opens: 0, releases: 0, reads: 0, lookups: 40, getattrs: 90, readdirs: 3, table };
    metrics.watch({ catalogs: () => [], caches: () => ({}), answeredByAddon: () => answered });
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="lookup"}')).toBe(40);
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="getattr"}')).toBe(90);
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="readdir"}')).toBe(3);
    expect(values.get('skills_mount_fuse_addon_table_entries')).toBe(120);
    expect(values.get('skills_mount_fuse_addon_table_entries_limit')).toBe(65_536);
    expect(values.get('skills_mount_fuse_addon_table_entries_peak')).toBe(300);
    expect(values.get('skills_mount_fuse_addon_table_evictions_total')).toBe(2);
    answered = { ...answered, lookups: 45, table: { ...table, entries: 10, evictions: 5 } };
    values = samples(await metrics.text());
    expect(values.get('skills_mount_fuse_answered_by_addon_total{op="lookup"}')).toBe(45);
    expect(values.get('skills_mount_fuse_addon_table_entries')).toBe(10);
    expect(values.get('skills_mount_fuse_addon_table_evictions_total')).toBe(5);
  });

  it('counts MCP requests by server, method and outcome, with latency and requests in flight per server', async () => {
    const metrics = new MountMetrics({ servers: ['demo', 'docs'], processMetrics: false });
    const mcp = metrics.requestObserver;
    mcp.started('demo', 'resources/read');
    mcp.started('demo', 'skills/list');
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_mcp_requests_in_flight{server="demo"}')).toBe(2);
    expect(values.get('skills_mount_mcp_requests_in_flight{server="docs"}')).toBe(0);
    mcp.finished('demo', 'resources/read', 'ok', 0.02);
    mcp.finished('demo', 'skills/list', 'timeout', 30);
    mcp.started('docs', 'resources/read');
    mcp.finished('docs', 'resources/read', 'not_found', 0.004);
    values = samples(await metrics.text());
    expect(values.get('skills_mount_mcp_requests_in_flight{server="demo"}')).toBe(0);
    expect(values.get('skills_mount_mcp_requests_total{server="demo",method="resources/read",outcome="ok"}')).toBe(1);
    expect(values.get('skills_mount_mcp_requests_total{server="demo",method="skills/list",outcome="timeout"}')).toBe(1);
    expect(values.get('skills_mount_mcp_requests_total{server="docs",method="resources/read",outcome="not_found"}')).toBe(1);
    expect(values.get('skills_mount_mcp_request_duration_seconds_count{server="demo",method="skills/list"}')).toBe(1);
    expect(values.get('skills_mount_mcp_request_duration_seconds_bucket{le="30",server="demo",method="skills/list"}')).toBe(1);
    expect(values.get('skills_mount_mcp_request_duration_seconds_bucket{le="10",server="demo",method="skills/list"}')).toBe(0);
  });

  it('counts verification failures by reason (zero from the start) and cache lookups by cache', async () => {
    const metrics = new MountMetrics({ servers: ['demo'], processMetrics: false });
    metrics.cacheEnabled('memory');
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_verification_failures_total{server="demo",reason="digest"}')).toBe(0);
    expect(values.get('skills_mount_cache_misses_total{cache="memory"}')).toBe(0);
    expect(values.has('skills_mount_cache_misses_total{cache="disk"}')).toBe(false);
    metrics.verificationFailed('demo', 'digest');
    metrics.verificationFailed('demo', 'digest');
    metrics.verificationFailed('demo', 'frontmatter');
    metrics.cacheEnabled('disk');
    metrics.cacheLookup('memory', false);
    metrics.cacheLookup('disk', true);
    metrics.cacheLookup('memory', true);
    metrics.cacheLookup('memory', true);
    values = samples(await metrics.text());
    expect(values.get('skills_mount_verification_failures_total{server="demo",reason="digest"}')).toBe(2);
    expect(values.get('skills_mount_verification_failures_total{server="demo",reason="frontmatter"}')).toBe(1);
    expect(values.get('skills_mount_verification_failures_total{server="demo",reason="size"}')).toBe(0);
    expect(values.get('skills_mount_cache_hits_total{cache="memory"}')).toBe(2);
    expect(values.get('skills_mount_cache_misses_total{cache="memory"}')).toBe(1);
    expect(values.get('skills_mount_cache_hits_total{cache="disk"}')).toBe(1);
    expect(values.get('skills_mount_cache_misses_total{cache="disk"}')).toBe(0);
  });

  it('reads each server state, its skills and the cache sizes at scrape time', async () => {
    const metrics = new MountMetrics({ servers: ['demo', 'docs', 'gone'], processMetrics: false });
    let demo: ConnectionStatus = { status: 'connected', protocolVersion: '2026-07-28' };
    const catalogs = () => [
      catalog('demo', demo, { skills: 5, declined: 1, rejected: 2 }),
      catalog('docs', { status: 'failed', reason: 'cannot connect' }, { skills: 3, offline: true }),
      catalog('gone', { status: 'incompatible', reason: 'no shared revision' }, { skills: 0 }),
    ];
    let memoryBytes = 1_000;
    metrics.watch({ catalogs, caches: () => ({ memory: { usedBytes: memoryBytes, limitBytes: 256 * 2 ** 20 }, disk: { usedBytes: 42, limitBytes: 2 ** 30 } }) });
    let values = samples(await metrics.text());
    expect(values.get('skills_mount_server_up{server="demo"}')).toBe(1);
    expect(values.get('skills_mount_server_up{server="docs"}')).toBe(0);
    expect(values.get('skills_mount_server_skills{server="demo"}')).toBe(5);
    expect(values.get('skills_mount_server_skills{server="docs"}')).toBe(3);
    expect(values.get('skills_mount_server_declined_skills{server="demo"}')).toBe(1);
    expect(values.get('skills_mount_server_rejected_skills{server="demo"}')).toBe(2);
    expect(values.get('skills_mount_server_offline{server="docs"}')).toBe(1);
    expect(values.get('skills_mount_server_offline{server="demo"}')).toBe(0);
    expect(values.get('skills_mount_server_state{server="gone",state="incompatible"}')).toBe(1);
    expect(values.get('skills_mount_server_state{server="gone",state="connected"}')).toBe(0);
    // One series per state and server, exactly one of them 1.
    expect(seriesOf(await metrics.text(), 'skills_mount_server_state')).toHaveLength(3 * SERVER_STATES.length);
    expect(values.get('skills_mount_cache_bytes{cache="memory"}')).toBe(1_000);
    expect(values.get('skills_mount_cache_limit_bytes{cache="disk"}')).toBe(2 ** 30);

    // A later scrape sees the present.
    demo = { status: 'degraded', protocolVersion: '2026-07-28', reason: 'refusing' };
    memoryBytes = 5_000;
    await new Promise((resolve) => setTimeout(resolve, 300));
    values = samples(await metrics.text());
    expect(values.get('skills_mount_server_up{server="demo"}')).toBe(0);
    expect(values.get('skills_mount_server_state{server="demo",state="degraded"}')).toBe(1);
    expect(values.get('skills_mount_server_state{server="demo",state="connected"}')).toBe(0);
    expect(values.get('skills_mount_cache_bytes{cache="memory"}')).toBe(5_000);
  });

  it('keeps the series bounded whatever values arrive: 1,000 hostile methods, ops, reasons, errnos and servers', async () => {
    const metrics = new MountMetrics({ servers: ['demo'], processMetrics: false });
    for (let i = 0; i < 1_000; i++) {
      const hostile = `evil/${i}"\n{x="y"}`;
      metrics.requestObserver.started(i % 2 ? 'demo' : `intruder-${i}`, hostile);
      metrics.requestObserver.finished(i % 2 ? 'demo' : `intruder-${i}`, hostile, hostile as never, 0.001);
      metrics.fuseObserver.started(hostile);
      metrics.fuseObserver.finished(hostile, 10_000 + i, 0.001);
      metrics.verificationFailed(`intruder-${i}`, hostile as VerificationFailureReason);
    }
    const text = await metrics.text();
    const values = samples(text);
    expect(seriesOf(text, 'skills_mount_mcp_requests_total')).toEqual([
      'skills_mount_mcp_requests_total{server="other",method="other",outcome="other"}',
      'skills_mount_mcp_requests_total{server="demo",method="other",outcome="other"}',
    ]);
    expect(values.get('skills_mount_mcp_requests_total{server="demo",method="other",outcome="other"}')).toBe(500);
    expect(seriesOf(text, 'skills_mount_mcp_requests_in_flight')).toHaveLength(2);
    expect(seriesOf(text, 'skills_mount_fuse_operations_total')).toEqual(['skills_mount_fuse_operations_total{op="other",errno="other"}']);
    expect(seriesOf(text, 'skills_mount_verification_failures_total')).toHaveLength(4 + 1);
    expect(values.get('skills_mount_verification_failures_total{server="other",reason="other"}')).toBe(1_000);
    // The whole text stays small: no hostile value reached it.
    expect(text).not.toContain('evil');
    expect(text).not.toContain('intruder');
  });

  it('escapes quotes, backslashes and newlines in label values (a label is whatever the config allowed)', async () => {
    const label = 'a"b\\c\nd';
    const metrics = new MountMetrics({ servers: [label], processMetrics: false });
    metrics.requestObserver.started(label, 'resources/read');
    metrics.requestObserver.finished(label, 'resources/read', 'ok', 0.01);
    const text = await metrics.text();
    expect(text).toContain('skills_mount_mcp_requests_total{server="a\\"b\\\\c\\nd",method="resources/read",outcome="ok"} 1\n');
    // No sample line was split by the newline.
    for (const line of text.split('\n')) expect(line === '' || line.startsWith('#') || /^[a-z_]+(\{.*\})? \S+$/.test(line)).toBe(true);
  });

  it('names errno values and maps request failures to their outcome', () => {
    expect([errnoName(0), errnoName(2), errnoName(5), errnoName(30), errnoName(116), errnoName(99_999)]).toEqual(['OK', 'ENOENT', 'EIO', 'EROFS', 'ESTALE', 'other']);
    const context = { server: 'demo', method: 'resources/read' };
    expect(requestOutcome(new SdkError('REQUEST_TIMEOUT' as never, 'timed out'), new UnavailableError('no answer', context))).toBe('timeout');
    expect(requestOutcome(new SdkProtocolError(-32602, 'nope'), new NotFoundError('not found', context))).toBe('not_found');
    expect(requestOutcome(new SdkProtocolError(-32601, 'nope'), new NotSupportedError('no', context))).toBe('not_supported');
    expect(requestOutcome(new SdkProtocolError(-32603, 'boom'), new UnavailableError('server error -32603', context))).toBe('server_error');
    expect(requestOutcome(new SdkError('INVALID_RESULT' as never, 'bad'), new ProtocolError('malformed', context))).toBe('protocol_error');
    expect(requestOutcome(new Error('x'), new LimitExceededError('too big', context))).toBe('too_large');
    expect(requestOutcome(new SdkError('CONNECTION_CLOSED' as never, 'closed'), new UnavailableError('connection closed', context))).toBe('unavailable');
  });

  const skip = skipWithoutTools(['promtool']);
  it.skipIf(skip)('promtool check metrics accepts the whole text, process metrics and an escaped label included', async () => {
    failIfMissing(['promtool']);
    const metrics = new MountMetrics({ servers: ['demo', 'a"b\\c\nd'] });
    metrics.fuseObserver.started('read');
    metrics.fuseObserver.finished('read', 0, 0.001);
    metrics.requestObserver.started('demo', 'resources/read');
    metrics.requestObserver.finished('demo', 'resources/read', 'ok', 0.01);
    metrics.cacheEnabled('memory');
    metrics.watch({ catalogs: () => [catalog('demo', { status: 'connected', protocolVersion: '2026-07-28' }, { skills: 5 })], caches: () => ({ memory: { usedBytes: 1, limitBytes: 2 } }) });
    const text = await metrics.text();
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    const checked = await promtoolCheck(text);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
    // And it is a real linter: a counter without _total is refused.
    expect((await promtoolCheck('# HELP bad_counter x\n# TYPE bad_counter counter\nbad_counter 1\n')).code).not.toBe(0);
  });
});
