// The errno table must cover every domain error class that src/errors.ts exports.

import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.js';
import { Errno, errnoForDomainError, errnoTable } from '../../src/fuse/errno.js';

const { errno } = constants;

type ConcreteErrorClass = new (message: string) => errors.SkillsMountError;

const domainErrorClasses = Object.entries(errors).filter(
  (entry): entry is [string, ConcreteErrorClass] =>
    typeof entry[1] === 'function' && entry[1].prototype instanceof errors.SkillsMountError,
);

// The errno a user sees for each class; new classes must be added here and in errno.ts.
const expected: Record<string, number> = {
  NotFoundError: errno.ENOENT,
  IntegrityError: errno.EIO,
  UnavailableError: errno.EIO,
  ProtocolError: errno.EIO,
  ReadOnlyError: errno.EROFS,
  NotADirectoryError: errno.ENOTDIR,
  IsADirectoryError: errno.EISDIR,
  NoAttributeError: 61, // ENODATA on Linux (getxattr's "no such attribute")
  LimitExceededError: errno.EFBIG,
  StaleVersionError: errno.ESTALE,
  ConfigError: errno.EINVAL,
  NotSupportedError: errno.EIO,
};

describe('errno table', () => {
  it('finds the exported domain error classes', () => {
    expect(domainErrorClasses.map(([name]) => name)).toContain('NotFoundError');
    expect(domainErrorClasses.length).toBeGreaterThanOrEqual(10);
  });

  it.each(domainErrorClasses)('maps %s to its errno', (name, ErrorClass) => {
    expect(errnoTable.has(ErrorClass)).toBe(true);
    expect(expected[name], `add ${name} to the expectations of this test`).toBeDefined();
    expect(errnoForDomainError(new ErrorClass('x'))).toBe(-(expected[name] ?? NaN));
  });

  it('maps nothing else', () => {
    expect(errnoTable.size).toBe(domainErrorClasses.length);
  });

  it('maps subclasses through their nearest mapped ancestor', () => {
    class DeclinedSkillError extends errors.NotFoundError {}
    expect(errnoForDomainError(new DeclinedSkillError('hidden'))).toBe(-errno.ENOENT);
  });

  it('leaves errors that are not domain errors to the caller (EIO + log)', () => {
    expect(errnoForDomainError(new TypeError('boom'))).toBeUndefined();
    expect(errnoForDomainError('a string')).toBeUndefined();
    expect(errnoForDomainError(undefined)).toBeUndefined();
    expect(Errno.EIO).toBe(-errno.EIO);
  });
});
