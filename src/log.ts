// The one shape of a log sink, for every layer and both programs: a line in, nothing back.
// The program's sink escapes what servers put into a line (src/format/escape.ts); callers
// pass text as it is.
export type Log = (line: string) => void;
