// Turns a resources/read result into bytes: picks the content whose uri matches,
// UTF-8-encodes text, strictly decodes base64 blobs. Anything else is a ProtocolError;
// content larger than the caller's byte limit is refused before it is decoded.
import { LimitExceededError, ProtocolError } from '../errors.js';
import type { UnverifiedContent } from './skill-source.js';

/** Decodes the content for `uri` out of a resources/read result, or throws ProtocolError (LimitExceededError over maxBytes). */
export function decodeReadResult(server: string, uri: string, result: { contents: unknown[] }, maxBytes = Number.POSITIVE_INFINITY): UnverifiedContent {
  // With the method in the context the error builds "server: resources/read uri: ..." itself.
  const context = { server, method: 'resources/read', uri };
  const matching = result.contents.filter(
    (content): content is Record<string, unknown> =>
      content !== null && typeof content === 'object' && (content as { uri?: unknown }).uri === uri,
  );
  if (matching.length === 0) {
    const got = result.contents.length === 0 ? 'no contents' : `${result.contents.length} contents, none for this uri`;
    throw new ProtocolError(got, context);
  }
  if (matching.length > 1) {
    throw new ProtocolError(`${matching.length} contents for the same uri`, context);
  }
  const content = matching[0]!;
  const mimeType = typeof content.mimeType === 'string' ? content.mimeType : undefined;
  const hasText = typeof content.text === 'string';
  const hasBlob = typeof content.blob === 'string';
  if (hasText === hasBlob) {
    throw new ProtocolError('content must carry exactly one of text or blob', context);
  }
  const tooLarge = (sizeBytes: number) =>
    new LimitExceededError(`${sizeBytes} bytes, over the ${maxBytes}-byte limit for one file`, context);
  if (hasText) {
    const text = content.text as string;
    // UTF-8 takes at least one byte per UTF-16 unit, so a long string is refused before encoding.
    if (text.length > maxBytes) throw tooLarge(Buffer.byteLength(text, 'utf8'));
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > maxBytes) throw tooLarge(bytes.length);
    return { uri, mimeType, bytes };
  }
  const blob = content.blob as string;
  const invalid = () => new ProtocolError('blob is not valid base64', context);
  if (blob.length % 4 !== 0) throw invalid();
  const decodedBytes = (blob.length / 4) * 3 - (blob.endsWith('==') ? 2 : blob.endsWith('=') ? 1 : 0);
  if (decodedBytes > maxBytes) throw tooLarge(decodedBytes);
  // Node's decoder skips characters outside the alphabet (and stops at inner padding), so
  // any such character shortens the output: checking the length replaces a regex pass over
  // up to 22 MB. (It also takes the URL-safe alphabet; digests still judge the bytes.)
  const bytes = Buffer.from(blob, 'base64');
  if (bytes.length !== decodedBytes) throw invalid();
  return { uri, mimeType, bytes };
}
