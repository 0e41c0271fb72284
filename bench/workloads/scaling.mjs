// Mount-ready time and memory at growing catalog sizes. One skills-serve per size over
// Streamable HTTP stays up across runs, so its one-time scan and hashing are paid once and
// each run measures the mount: spawn, full skills/list, namespace, kernel mount. Measured once,
// on the run's first FUSE backend: no target of issue 19 is about these rows.
import { startHttpServer } from '../lib/http-server.mjs';
import { memoryOf, startMount } from '../lib/mount-child.mjs';
import { connectHttp, listAllSkills } from '../lib/raw-client.mjs';
import { timed } from '../lib/stats.mjs';

/** Resolves, for a catalog dir, ready times (ms), the raw listing times (ms) and memory per run. */
export async function measureScaling({ workDir, name, dir, runs, pageSize, backend, log }) {
  const server = await startHttpServer(dir, ['--page-size', String(pageSize)]);
  try {
    // The first listing makes the server hash everything; not part of any figure.
    const warmup = await timed(async () => {
      const client = await connectHttp(server.url);
      try {
        return await listAllSkills(client);
      } finally {
        await client.close();
      }
    });
    const files = warmup.result.skills.reduce((sum, skill) => sum + skill.resources.length, 0);
    const result = { backend, skills: warmup.result.skills.length, files, pages: warmup.result.pages, serverWarmupMs: warmup.ms, readyMs: [], rawListMs: [], memory: [] };
    for (let run = 0; run < runs; run++) {
      const client = await connectHttp(server.url);
      try {
        result.rawListMs.push((await timed(() => listAllSkills(client))).ms);
      } finally {
        await client.close();
      }
      const mount = await startMount({ workDir, name: `${name}-${run}`, backend, servers: { s: { url: server.url } } });
      try {
        result.readyMs.push(mount.readyMs);
        result.memory.push(await memoryOf(mount.pid));
      } finally {
        await mount.stop();
      }
      log(`scaling ${name}: run ${run + 1}/${runs} done`);
    }
    result.serverLog = server.log().split('\n').filter((line) => /watch failed|rescan/.test(line));
    return result;
  } finally {
    await server.stop();
  }
}
