// Counts MCP requests at the server from skills-serve's --verbose log
// ("skills-serve: <method> [<uri>] ok|error|not found ..."), window by window.
import { readFile } from 'node:fs/promises';

const REQUEST_LINE = /^skills-serve: ([a-z]+(?:\/[a-zA-Z/]+)?) (?:(\S+) )?(ok|error|not found|failed after)/;

/** Requests logged to `logFile` from now on, counted by method when `window()` is called. */
export async function requestWindow(logFile) {
  const startLine = (await readLines(logFile)).length;
  return {
    async counts() {
      const lines = (await readLines(logFile)).slice(startLine);
      const byMethod = {};
      let total = 0;
      for (const line of lines) {
        const match = REQUEST_LINE.exec(line);
        if (!match) continue;
        byMethod[match[1]] = (byMethod[match[1]] ?? 0) + 1;
        total++;
      }
      return { total, contentReads: byMethod['resources/read'] ?? 0, byMethod };
    },
  };
}

async function readLines(file) {
  const text = await readFile(file, 'utf8').catch((error) => (error.code === 'ENOENT' ? '' : Promise.reject(error)));
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}
