// skills-serve over Streamable HTTP on a free loopback port, as a child process.
import { spawn } from 'node:child_process';
import { SKILLS_SERVE } from './paths.mjs';

/** Starts `skills-serve DIR --http 127.0.0.1:0 ...flags`; resolves {url, log(), stop()} once it listens. */
export function startHttpServer(dir, flags = []) {
  const child = spawn(process.execPath, [SKILLS_SERVE, dir, '--http', '127.0.0.1:0', '--lenient', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      const url = /listening on (\S+)/.exec(stderr)?.[1];
      if (url) {
        resolve({
          url,
          log: () => stderr,
          async stop() {
            child.kill('SIGTERM');
            await Promise.race([exited, new Promise((done) => setTimeout(done, 5_000))]);
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`skills-serve ${dir} exited (${code}) before listening:\n${stderr}`)));
  });
}
