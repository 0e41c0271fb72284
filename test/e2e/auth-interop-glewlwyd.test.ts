// Sign-in interop with Glewlwyd (Debian's package, unpacked by scripts/idp-interop.sh without its
// maintainer scripts; a SQLite database and config of the test's own, its OpenID Connect plugin
// created through its admin API: test/support/idp-glewlwyd.ts) in front of `skills-serve
// --auth-issuer`, through a real kernel mount: the scenario of test/support/idp-scenario.ts.
// Not installed: skipped locally, a failure by name in CI.
import { glewlwydUnavailable, startGlewlwyd } from '../support/idp-glewlwyd.js';
import { describeInterop } from '../support/idp-scenario.js';

describeInterop({
  name: 'Glewlwyd',
  unavailable: glewlwydUnavailable,
  start: startGlewlwyd,
  // Glewlwyd counts lifetimes in whole seconds and the mount renews past half of one: 4 s leaves room.
  accessTokenTtlS: 4,
});
