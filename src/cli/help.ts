// The text of `skills-mount --help`: usage, options, subcommands and examples.

export const USAGE = `usage: skills-mount MOUNTPOINT [--config FILE] [--server LABEL=COMMAND|URL]... [--only LABEL,...]
                    [--timeout SECONDS] [--startup-timeout SECONDS] [--protocol-version VERSION]
                    [--cache-size MIB] [--cache-dir DIR] [--disk-cache-size MIB]
                    [--disk-cache-total-size MIB] [--no-disk-cache]
                    [--metadata-ttl SECONDS] [--no-dynamic]
                    [--approved-only LABEL,...] [--lock FILE] [--allow-user USER]
                    [--metrics [HOST:]PORT] [--verbose]
       skills-mount CONFIG MOUNTPOINT [-o OPTION,...] [--foreground] [--log-file FILE]
       skills-mount snapshot DEST [--config FILE] [--server ...] [--only ...] [--approved]
                    [--include-dynamic] [--watch] [--timeout SECONDS] [--cache-dir DIR] [--no-disk-cache]
                    [--allow-shared-parent] [--project DIR] [--oci [--for HARNESS]]
       skills-mount serve [--http [HOST:]PORT] [--config FILE | --server ...] [--only ...]
                    [--project DIR | --all [--include-dynamic]] [--audit FILE] [--metrics [HOST:]PORT]
                    [--auth-issuer URL [--auth-audience URL] [--auth-scope S]] [--unauthenticated-network]
                    [--ttl SECONDS] [--timeout SECONDS] [--cache-size MIB] [--cache-dir DIR]
                    [--disk-cache-size MIB] [--no-disk-cache] [--session-idle S] [--max-sessions N] [--verbose]
       skills-mount verify --links [--json]
       skills-mount verify DEST [--json] [--expect sha256:...]
                    [--against-server [--config FILE] [--server ...] [--only ...] [--timeout SECONDS]]
       skills-mount status [MOUNTPOINT] [--json]
       skills-mount cache status|prune|clear [LABEL] [--cache-dir DIR] [--config FILE] [--json]
       skills-mount approve PATH... [--yes [--grant-allowed-tools] [--grant-exec]]
       skills-mount approve LABEL/SKILLDIR... (--config FILE | --server LABEL=COMMAND|URL ...)
                    [--only LABEL,...] [--yes [--grant-allowed-tools] [--grant-exec]]
       skills-mount revoke PATH... | --label LABEL --uri URI
       skills-mount revoke LABEL/SKILLDIR... (--config FILE | --server LABEL=COMMAND|URL ...)
                    [--only LABEL,...]
       skills-mount approvals [--json]
       skills-mount link HARNESS... [--project DIR] [--config FILE] [--server ...] [--only ...]
                    [--watch] [--json]
       skills-mount unlink HARNESS... [--project DIR]
       skills-mount lock LABEL/SKILLDIR... --project DIR [--config FILE | --server ...]
                    [--yes [--grant-allowed-tools] [--grant-exec]]
       skills-mount unlock LABEL/SKILLDIR... --project DIR
       skills-mount outdated --project DIR [--config FILE | --server ...] [--json | --full]
       skills-mount update LABEL/SKILLDIR... | --all --project DIR [--config FILE | --server ...] [--yes] [--full]
       skills-mount verify --project DIR [--json] [--against-server [--config FILE] [--server ...]]
       skills-mount unmount MOUNTPOINT
       skills-mount doctor [--config FILE] [--server ...] [--only ...] [--json]
       skills-mount login LABEL... [--config FILE | --server 'LABEL=URL [oauth.FIELD=VALUE...]' ...] [--no-browser]
                    [--wait SECONDS] [--timeout SECONDS]
       skills-mount logout LABEL... [--config FILE | --server ...]
       skills-mount --help | --version
`;

export const HELP = `${USAGE}
Mounts the skills of MCP servers read-only at MOUNTPOINT/<label>/, in the foreground
until Ctrl-C or SIGTERM. skills.json at the root lists every server and skill.

Mount options:
  --config FILE           servers to mount; default $XDG_CONFIG_HOME/skills-mount/config.json
                          (~/.config/skills-mount/config.json); without it and without
                          --server, the bundled demo is mounted as "demo". Reads the files
                          you already have: Claude Desktop / Cursor ("mcpServers"), Claude
                          Code .mcp.json ("type": stdio/http/sse), VS Code mcp.json ("servers")
  --server LABEL=COMMAND  a stdio server, e.g. --server 'docs=npx -y docs-mcp' (quote it)
  --server LABEL=URL      a Streamable HTTP server (sse+URL: a legacy SSE server); repeatable
  --server 'LABEL=URL oauth.FIELD=VALUE ...'
                          an HTTP server with fields of the config's "oauth" object, e.g.
                          oauth.clientId=ID oauth.callbackPort=8765 (a pre-registered client)
  --only LABEL,...        mount only these servers of the config
  --timeout SECONDS       deadline for every MCP request (default 10)
  --startup-timeout SECONDS
                          the mount appears by then even if servers are still connecting or
                          listing (default 30); they go on in the background
  --protocol-version V    negotiate (default), 2026-07-28 or 2025-11-25, for every server
  --cache-size MIB        memory for verified file contents (default 256)
  --cache-dir DIR         the verified disk cache, kept across restarts and used while a server
                          is offline (default $XDG_CACHE_HOME/skills-mount, ~/.cache/skills-mount)
  --disk-cache-size MIB   bound on the disk cache of this mount (default 1024; least recently
                          used files go first)
  --disk-cache-total-size MIB
                          bound on the whole cache folder, every mount's part together
                          (default 2048, or --disk-cache-size if larger); at start the least
                          recently used parts of mounts not running go first, and parts whose
                          mountpoint is gone go after 7 days unused
  --no-disk-cache         keep verified content in memory only
  --metadata-ttl SECONDS  how long the kernel reuses names and attributes (default 600: every
                          change the mount learns of is invalidated at once)
  --no-dynamic            hide skills whose files carry no digests ("resources": "dynamic")
  --approved-only LABEL,...
                          serve these servers' skills only in the approved view,
                          MOUNTPOINT/_approved/ (also "approvedOnly": true in the config)
  --lock FILE             the approved view shows the versions a project's skills-lock.json
                          locks, instead of your approvals; kept served from what this machine
                          verified before when a server moves on; the file is watched
  --allow-user USER       let USER (a name or uid) read the mount too: every file is theirs,
                          0400 (directories 0500), and only they and root may enter it
                          (allow_other; a daemon not run by root needs user_allow_other in
                          /etc/fuse.conf). Without it the mount is private to you
  --metrics [HOST:]PORT   Prometheus metrics at /metrics and a health check at /healthz
                          (host 127.0.0.1 unless given)
  --verbose               log every MCP request with its duration

The fstab form (mount -t fuse.skills-mount CONFIG MOUNTPOINT -o OPTIONS runs it; docs/fstab.md):
  CONFIG MOUNTPOINT       CONFIG is --config; returns 0 once the mount answers (else nonzero,
                          saying why), the daemon going on in the background; umount stops it
  -o OPTION,...           the mount flags but --config and --server, with _ for -:
                          only=docs:team (":" separates a list), allow_user=agent, lock=FILE,
                          no_disk_cache, ...; mount(8)'s own options (rw, _netdev,
                          x-systemd.*, ...) are ignored; any other is refused by name, and
                          allow_other too (allow_user=NAME lets one more user read)
  --foreground            stay in the foreground (as a systemd service does)
  --log-file FILE         (-o log=FILE) where the background daemon logs; default
                          $XDG_STATE_HOME/skills-mount/mounts/<mountpoint>.log (~/.local/state)

Commands:
  snapshot DEST           where no FUSE is: writes the mount's view to DEST as read-only
                          files (0444), every one verified, published at once (DEST is a
                          symlink into .DEST.snapshots/), only changed files fetched again.
                          --approved: only _approved/; --include-dynamic: "dynamic" skills
                          too (unverified); --watch: again on every change, until SIGTERM.
                          Fetches every listed file (the mount fetches on read). Prints the
                          digest of its manifest (sha256:...) for verify --expect. Refuses
                          (exit 2) a DEST in a folder another user owns or can write (and
                          folders above it open to others without the sticky bit);
                          --allow-shared-parent accepts DEST's own folder writable by others
                          (a Kubernetes emptyDir). --project DIR: exactly DIR/skills-lock.json
                          (an approved view). --oci: DEST is an OCI image layout of the view
                          (linux/amd64 + linux/arm64, one reproducible tar+gzip layer with
                          .snapshot.json; prints the image's digest; push it with skopeo
                          copy oci:DEST docker://...); --for HARNESS: the layer is that
                          harness's skills root, each approved skill as link writes it.
                          Exit 0, or 1 when some server could not be snapshotted whole
  serve                   the verified view re-served as one MCP skills server (SEP-2640,
                          both eras), for hosts that speak the extension: stdio (a host
                          starts it), or Streamable HTTP with --http (port 0 picks one; the
                          URL is printed). Serves your approvals (what _approved/ shows);
                          --project DIR exactly DIR/skills-lock.json (followed as it changes;
                          a locked version stays served when its server moves on); --all every
                          verified skill (--include-dynamic: "dynamic" ones too, marked). The
                          policy applies. Server LABEL's skill://P is served as
                          skill://LABEL/P, with the upstream digests; every file is fetched
                          when a client asks and verified first. Each skills/get and SKILL.md
                          read is logged (--audit FILE: appended as JSON lines). A
                          non-loopback --http needs --auth-issuer (JWT or DPoP tokens) or
                          --unauthenticated-network. Exit 2 for a bad flag, lockfile or port
  verify DEST             re-hashes DEST (the published link, or a copy: any folder holding
                          a .snapshot.json) against its .snapshot.json; names each file that
                          differs, is missing or is extra; exit 1 if any. The manifest is the
                          folder's own: --expect sha256:... checks it against the digest
                          snapshot printed; --against-server compares every digest with what
                          the configured servers list now. Warns when others than you and
                          root can change the snapshot. An OCI image layout (snapshot --oci,
                          or skopeo copy ... oci:DIR): every blob re-hashed, the chain
                          index -> manifests -> config and layer checked, the layer's files
                          against its manifest; --expect names the image's digest
  doctor                  what this machine offers and what to do about each piece: FUSE
                          device, fusermount3, user_allow_other, the addon and where it loads
                          from, the kernel, the config and its servers (5 s each), sign-in,
                          the link store's filesystem. Exits 1 when a needed piece is missing.
  login LABEL...          signs in to HTTP servers that ask for authorization (OAuth): opens
                          the sign-in page with $BROWSER (or xdg-open with a display, else
                          prints it) and takes the redirect on 127.0.0.1; --no-browser prints
                          the address and reads the address the browser ends on from stdin.
                          Tokens go to $XDG_CONFIG_HOME/skills-mount/auth/ (0600); a running
                          mount picks them up within 2 s. Exit 0, 1 when a sign-in failed
  logout LABEL...         removes the label's sign-ins, revoking them where the server allows
                          (with the client --config or --server registered beforehand, if any)
  status [MOUNTPOINT]     mounts, servers with state and discovery, skill counts, cache
                          use and the latest errors; --json for scripts. Exits 1 when a
                          mount is stale or not responding.
  approve PATH...         shows the skill at PATH (MOUNTPOINT/LABEL/SKILL) with its files,
                          digests and permission fields, asks, and approves it as shown:
                          it appears in MOUNTPOINT/_approved/ while its files stay so.
                          Asks apart for its allowed-tools, and, when it has files that look
                          like scripts (scripts/, .sh, .py, ...), whether they may run: its
                          files starting with #! become executable in linked entries (the
                          mount itself stays noexec). --yes approves without asking; with
                          it, --grant-allowed-tools and --grant-exec grant those too
  approve LABEL/SKILLDIR... --config FILE | --server ...
                          where no FUSE is (a container, CI): starts the servers the PATHs
                          name (of the config, or --server; --only narrows) in this process,
                          reads the skill as a mount would show it, and shows, asks and
                          approves the same way; then stops them. PATH is the skill's
                          directory under its label, as on a mount: docs/guide
  revoke PATH...          withdraws approvals (--label L --uri U for a skill gone from the
                          mount; LABEL/SKILLDIR with --config or --server, without a mount)
  approvals               the stored approvals ($XDG_CONFIG_HOME/skills-mount/approvals.json)
                          with their allowed-tools and exec grants; --json for scripts
  link HARNESS...         puts every approved skill into the harness's own skills folder,
                          one entry per skill named for it (a qualified name, label-name, when
                          the name is taken; nothing there is ever replaced), and keeps it
                          current: approve, revoke and a running mount update every linked
                          folder. HARNESS: claude-code, codex, gemini, opencode, cursor,
                          vscode, goose, agents (the shared .agents/skills). --project DIR:
                          the project's folder instead of yours. Bytes come from the running
                          mounts, else from the configured servers (--config, --server,
                          --only); --watch keeps the folders current without a mount, until
                          SIGTERM. allowed-tools and hooks are held back unless granted; #!
                          files are executable only with approve --grant-exec. Exit 1 when a
                          skill could not be linked (why is printed)
  unlink HARNESS...       takes out exactly the entries link made (--project DIR: the project's)
  lock LABEL/SKILLDIR... --project DIR
                          a team's approval: shows the skill as approve does (from the
                          configured servers started here), asks, and writes it into
                          DIR/skills-lock.json, every file's digest and the grants given;
                          commit it. With the lockfile, link --project DIR links exactly the
                          locked versions on every machine (nothing needs approving there),
                          keeps serving them when a server moves on, and refuses a skill
                          whose server serves other bytes, naming what differs
  unlock LABEL/SKILLDIR... --project DIR
                          takes skills out of the lockfile
  outdated --project DIR  each locked skill against its server now: files added, removed and
                          changed, permission fields the new version adds, a diff of SKILL.md.
                          The text shows at most 200 lines of a diff and 2,000 file and diff
                          lines in all (1,000 characters a line), and counts what it left out;
                          --full prints every line, --json has everything.
                          Exit 0 all current, 1 some differ, 2 a server could not be asked
  update PATH... | --all --project DIR
                          shows that (bounded per skill; --full: all of it), asks, and locks
                          the served version; never widens a grant
  verify --project DIR    the project's linked folders equal its lock exactly (every entry,
                          every file's digest, nothing missing or extra; writes nothing):
                          CI's frozen check. --against-server: the servers still serve it too
  verify --links          re-hashes every entry link made against its approval: every file the
                          approved bytes and mode, SKILL.md exactly the documented change of the
                          approved one, nothing more; names entries whose approval ended
  unmount MOUNTPOINT      stops the daemon and unmounts; also removes stale mounts
  cache status            the disk cache per mount (mountpoint, size, last used, running or
                          not) and per server: files, bytes, saved listing
  cache prune             removes the cached content of servers no longer in the config, and
                          of mounts whose mountpoint is gone (unused for 7 days)
  cache clear [LABEL]     removes the cached content (of one server label); refuses while
                          the daemon serving that mount runs

"serve", "snapshot", "verify", "status", "unmount", "cache", "approve", "revoke", "approvals", "link", "unlink", "lock",
"unlock", "outdated", "update", "doctor", "login" and "logout" are commands only as the first
argument; to mount on a directory of that name, write a path: skills-mount ./status

Examples:
  skills-mount ~/.cache/mcp-skills
  skills-mount ~/.cache/mcp-skills --config ~/.cursor/mcp.json --only github,docs
  skills-mount ~/skills --config .vscode/mcp.json       # \${input:ID} from $SKILLS_MOUNT_INPUT_ID
  skills-mount /tmp/s --server 'local=node dist/cli/skills-serve.js examples/skills'
  skills-mount /tmp/s --server docs=https://docs.example.com/mcp
  skills-mount snapshot /skills/current --config ~/.cursor/mcp.json --watch
  skills-mount verify /skills/current
  skills-mount status
  skills-mount status ~/.cache/mcp-skills --json
  skills-mount link claude-code codex
  skills-mount link claude-code --project ~/src/app
  skills-mount unmount ~/.cache/mcp-skills
  skills-mount cache status
  skills-mount approve ~/.cache/mcp-skills/demo/hello-mount
  skills-mount approve docs/guide --config ~/.cursor/mcp.json --yes --grant-exec
  skills-mount lock docs/guide --project . --config .mcp.json      # then: git add skills-lock.json
  skills-mount link claude-code --project . --config .mcp.json     # a colleague, after git pull
  skills-mount outdated --project . --config .mcp.json
  skills-mount verify --project .                                   # in CI
  skills-mount serve --config ~/.config/skills-mount/config.json     # as a host's stdio MCP server
  skills-mount serve --http 127.0.0.1:8931 --project .
  ls ~/.cache/mcp-skills; cat ~/.cache/mcp-skills/skills.json

More in the package's docs/ folder: configuration.md, agents.md, teams.md, policy.md,
troubleshooting.md, service.md.
`;
