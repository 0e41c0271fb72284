// The one error of the mount lifecycle: setting up or taking down a mount failed for a
// reason outside the user's input (their mistakes are ConfigErrors).
import { SkillsMountError } from '../errors.js';

/** The mount could not be set up or torn down for a reason outside the user's input. */
export class MountError extends SkillsMountError {
  override name = 'MountError';
  readonly code = 'MOUNT_FAILED';
}
