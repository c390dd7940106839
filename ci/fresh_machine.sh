#!/usr/bin/env bash
# Runs the README's two commands (scripts/setup.sh, then scripts/test.sh) on a fresh Debian 12 root.
#
# Why: CI otherwise runs on a machine that already has packages installed, so a package missing
# from scripts/setup.sh goes unnoticed there (Debian's libdnnl-dev CMake config calls
# find_package(OpenCL) and slipped through that way; fixed in c9443ea). Here setup.sh starts from a
# minimal Debian 12 and has to install every package itself, or the build fails.
#
# What it does, each step timed:
#   1. mmdebstrap builds a bookworm root, variant minbase: the Essential:yes packages plus those of
#      Priority required (apt among them). That is debootstrap's --variant=minbase and the package
#      set of the official debian:12 container image: no compiler, no git, no sudo, no
#      ca-certificates, none of the project's packages. The mirror is the Debian mirror this host's
#      apt uses, as apt sees it (apt-get indextargets).
#   2. A clean `git clone` of this repository at HEAD into /root/benchfp of the root (run from the
#      host, so the root does not need git). Uncommitted changes are not tested.
#   3. chroot into it as root, with /proc, /sys, /dev and /dev/pts mounted as on the host (so
#      perf_event_open and libpfm4's /sys/bus/event_source work), and a clean environment:
#        scripts/setup.sh
#        BENCHFP_GATE_E2E=0 BENCHFP_SANITIZERS=0 BENCHFP_FUZZ=0 BENCHFP_REQUIRE_PERF=1 scripts/test.sh
#          (with --full: BENCHFP_REQUIRE_PERF=1 scripts/test.sh, the whole of it)
#        build/benchfp   (the default suite, cases/default; --no-suite skips it)
#
# Speed: a .deb cache (default /var/cache/benchfp-fresh-machine) is bind-mounted on the root's
# /var/cache/apt/archives, for mmdebstrap and for setup.sh's apt-get. It is seeded with hard links
# to the host's downloaded .deb files (/var/cache/apt/archives) and keeps what the root downloads,
# so a second run downloads almost nothing. These are only downloaded archives: apt in the root
# still resolves and installs every package itself from its own indexes and checks each file's
# hash; nothing installed on the host is copied into the root. A cache of its own rather than the
# host's directory itself, so that apt in the root neither takes the host apt's archive lock nor
# chowns the host's partial/ to the root's _apt user.
#
# Mounts: the script runs itself in a private mount namespace (unshare), so no mount made here is
# ever visible on the host, and they all vanish with the last process in that namespace even if
# the script is killed with SIGKILL. A trap stops the running step and unmounts everything under
# the root on exit, failure, Ctrl-C, SIGTERM or SIGHUP, and the root is deleted only once nothing is
# mounted under it any more.
#
# Usage: ci/fresh_machine.sh [--full] [--no-suite] [--keep] [--root=DIR] [--cache=DIR | --no-cache]
# Needs root (mount, chroot, mmdebstrap --mode=root). Installs mmdebstrap with apt-get if missing.
# Exit status: 0 passed, 1 a step failed, 2 bad usage or missing privileges (130/143 when
# interrupted by SIGINT/SIGTERM). The last line is the summary, e.g.
#   fresh machine: root 16 s, set-up 189 s, tests 45 s, suite 15 s, total 330 s: PASSED
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: ci/fresh_machine.sh [options]
Builds a minimal Debian 12 root with mmdebstrap, clones this repository at HEAD into it, and runs
scripts/setup.sh, then scripts/test.sh, then build/benchfp (default suite) inside it as root.

  --full         run the whole scripts/test.sh (default: BENCHFP_GATE_E2E=0 BENCHFP_SANITIZERS=0 BENCHFP_FUZZ=0)
  --no-suite     do not run build/benchfp's default suite after the tests
  --keep         keep the root afterwards (unmounted) for debugging
  --root=DIR     build the root in DIR (must not exist or be empty; default /var/tmp/benchfp-fresh-machine.XXXXXX)
  --cache=DIR    .deb cache bind-mounted on the root's /var/cache/apt/archives
                 (default /var/cache/benchfp-fresh-machine)
  --no-cache     download every package (no cache)
  -h, --help     this text
Exit status: 0 passed, 1 a step failed, 2 bad usage or not root.
EOF
}

full=0 suite=1 keep=0 root_arg='' cache=/var/cache/benchfp-fresh-machine
for arg in "$@"; do
  case $arg in
    --full) full=1 ;;
    --no-suite) suite=0 ;;
    --keep) keep=1 ;;
    --root=?*) root_arg=${arg#--root=} ;;
    --cache=?*) cache=${arg#--cache=} ;;
    --no-cache) cache='' ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fresh machine: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

if [[ $(id -u) -ne 0 ]]; then
  echo "fresh machine: needs root (mmdebstrap --mode=root, mount, chroot); run it with sudo" >&2
  exit 2
fi

# Paths end up in mount tables (/proc/self/mountinfo escapes blanks) and in mmdebstrap's hook
# command lines: accept only plain absolute paths rather than quote them everywhere.
plain_path() { [[ $1 =~ ^/[A-Za-z0-9._/+-]*$ && $1 != / ]]; }

# Re-run in a private mount namespace (see "Mounts" above). The variable stops the recursion.
if [[ ${BENCHFP_FRESH_MACHINE_NS:-} != 1 ]]; then
  self=$(readlink -f "${BASH_SOURCE[0]}")
  if ! unshare --mount --propagation private true 2>/dev/null; then
    echo "fresh machine: cannot create a mount namespace (unshare --mount)" >&2
    exit 2
  fi
  BENCHFP_FRESH_MACHINE_NS=1 exec unshare --mount --propagation private -- bash "$self" "$@"
fi

repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
git=(git -c safe.directory='*')  # the checkout may belong to the user who ran sudo
started=$SECONDS
stamp() { printf '[%4d s]' $((SECONDS - started)); }
say() { echo "== $(stamp) $*"; }

# --- the root's location -------------------------------------------------------------------------
if [[ -n $cache ]]; then
  cache=$(readlink -m "$cache")
  plain_path "$cache" || { echo "fresh machine: --cache must be a plain path other than /: '$cache'" >&2; exit 2; }
fi
if [[ -n $root_arg ]]; then
  root=$(readlink -m "$root_arg")
  plain_path "$root" || { echo "fresh machine: --root must be a plain path other than /: '$root'" >&2; exit 2; }
  if [[ -e $root && ( ! -d $root || -n $(ls -A "$root") ) ]]; then
    echo "fresh machine: --root=$root exists and is not an empty directory" >&2
    exit 2
  fi
  mkdir -p "$root"
else
  # /var/tmp rather than /tmp: the root with its build takes a few GB and /tmp may be RAM.
  root=$(mktemp -d /var/tmp/benchfp-fresh-machine.XXXXXX)
fi
# mktemp makes it 0700; the root's / must be 0755 or apt's _apt user cannot reach its cache.
chmod 0755 "$root"

# Step times and the first failure, for the summary line that cleanup prints last.
declare -A took=()
failed=''
step_done() {  # NAME START STATUS
  took[$1]=$((SECONDS - $2))
  if (($3)); then
    say "$1: FAILED (exit $3) after ${took[$1]} s"
    failed=${failed:-"$1 (exit $3)"}
  else
    say "$1: done in ${took[$1]} s"
  fi
}

summary() {  # EXIT_STATUS
  local verdict=PASSED line
  if [[ -n $failed ]]; then verdict="FAILED in $failed"
  elif (($1)); then verdict="FAILED (exit $1)"
  fi
  t() { if [[ -n ${took[$1]:-} ]]; then echo "${took[$1]} s"; else echo "not run"; fi; }
  line="fresh machine: root $(t mmdebstrap), set-up $(t setup.sh), tests $(t test.sh)"
  if ((suite)); then line+=", suite $(t benchfp)"; fi
  echo "$line, total $((SECONDS - started)) s: $verdict"
}

# --- clean-up: stop the step, unmount, delete ------------------------------------------------------
step_pid=''  # the running step, leader of its own process group (setsid)

mounts_under_root() {
  # Field 5 of mountinfo is the mount point. Reverse order puts /x/dev/pts before /x/dev.
  awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

cleanup() {
  local status=$? m
  trap - EXIT INT TERM HUP
  if [[ -n $step_pid ]]; then
    say "stopping the running step (process group $step_pid)"
    kill -TERM -- "-$step_pid" 2>/dev/null || kill -TERM "$step_pid" 2>/dev/null || true
    for _ in {1..20}; do kill -0 -- "-$step_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$step_pid" 2>/dev/null || true
    wait "$step_pid" 2>/dev/null || true
    ((status)) || status=1
  fi
  for m in $(mounts_under_root); do
    umount "$m" 2>/dev/null || umount --lazy "$m" || true
  done
  if [[ -n $(mounts_under_root) ]]; then
    # Never rm -rf across a bind mount of /dev or of the cache.
    echo "fresh machine: still mounted, $root left in place:" >&2
    mounts_under_root >&2
    ((status)) || status=1
  elif ((keep)); then
    say "root kept (nothing mounted) in $root; to enter it: mount -t proc proc $root/proc and chroot $root"
  else
    say "removing $root"
    rm -rf --one-file-system "$root"
  fi
  summary "$status"
  exit "$status"
}
trap cleanup EXIT
trap 'failed=${failed:-"interrupted (SIGINT)"}; exit 130' INT
trap 'failed=${failed:-"terminated (SIGTERM or SIGHUP)"}; exit 143' TERM HUP

# Runs one step in its own process group, so that the trap can stop all of it (mmdebstrap's apt,
# cmake's compilers) and Ctrl-C or a CI timeout does not leave it running in the root.
# `wait` (unlike a foreground command) returns as soon as a trapped signal arrives.
run_step() {
  local status=0
  setsid "$@" &
  step_pid=$!
  wait "$step_pid" || status=$?
  step_pid=''
  return "$status"
}

# Runs a command line in the root as a login on a fresh machine would: /root, the standard PATH,
# nothing else of this environment (no CC, CXXFLAGS, ... of the host) except a proxy, if the
# host needs one to reach the mirror, and the BENCHFP_* settings given after the command line.
in_root() {
  local cmdline=$1; shift
  local env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
             TERM="${TERM:-dumb}")
  local v
  for v in http_proxy https_proxy no_proxy; do
    if [[ -n ${!v:-} ]]; then env+=("$v=${!v}"); fi
  done
  run_step chroot "$root" /usr/bin/env -i "${env[@]}" "$@" /bin/bash -c "cd /root/benchfp && $cmdline"
}

mount_root() {
  # A fresh proc: the root's processes see themselves as on the host. /sys and /dev are bind
  # mounts, not recursive ones: nothing of the host's submounts to unmount by mistake. /dev/shm
  # gets its own tmpfs so that nothing the tests put there lands in the host's /dev.
  mkdir -p "$root/proc" "$root/sys" "$root/dev"
  mount -t proc proc "$root/proc"
  mount --bind /sys "$root/sys"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  # (No mkdir under dev/ from here on: it would land in the host's /dev.)
  if [[ -d $root/dev/shm ]]; then mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"; fi
  if [[ -n $cache ]]; then
    mount --bind "$cache" "$root/var/cache/apt/archives"
  fi
}

# --- 0. tools and mirror ---------------------------------------------------------------------------
say "root: $root; repository: $repo at $("${git[@]}" -C "$repo" rev-parse --short HEAD)"
if [[ -n $("${git[@]}" -C "$repo" status --porcelain --untracked-files=no) ]]; then
  say "note: the checkout has uncommitted changes; they are not tested (a clean clone of HEAD is)"
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap on the host"
  apt-get update -q
  apt-get install -y -q mmdebstrap
fi
# The host's Debian sources as apt knows them, one "deb URI CODENAME COMPONENTS" line per suite,
# bookworm's suites only (the host may list other vendors' repositories, or none of its own).
debian_sources() {
  # shellcheck disable=SC2016  # $(...) are apt's format fields, not shell expansions
  apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(COMPONENT)' \
      'Origin: Debian' 'Created-By: Packages' |
    awk '$2 ~ /^bookworm(-updates|-security)?$/ {
           k = $1 " " $2; if (!(k in c)) order[n++] = k
           if (index(c[k] " ", " " $3 " ") == 0) c[k] = c[k] " " $3 }
         END { for (i = 0; i < n; i++) print "deb " order[i] c[order[i]] }'
}
mapfile -t mirrors < <(debian_sources)
if ((${#mirrors[@]} == 0)); then
  apt-get update -q  # no index lists yet on this host
  mapfile -t mirrors < <(debian_sources)
fi
if ((${#mirrors[@]} == 0)); then
  echo "fresh machine: the host's apt knows no Debian bookworm mirror (apt-get indextargets)" >&2
  exit 2
fi
for m in "${mirrors[@]}"; do say "mirror: $m"; done

mmdebstrap_opts=(--mode=root --variant=minbase --format=directory)
if [[ -n $cache ]]; then
  mkdir -p "$cache"
  # Hard links: instant and no extra space. Fails across file systems: then no seeding.
  if compgen -G '/var/cache/apt/archives/*.deb' >/dev/null; then
    find /var/cache/apt/archives -maxdepth 1 -name '*.deb' -exec ln -f -t "$cache" {} + 2>/dev/null ||
      say "note: cannot hard-link the host's .deb files into $cache (another file system); not seeded"
  fi
  say "package cache: $cache ($(find "$cache" -maxdepth 1 -name '*.deb' | wc -l) .deb files)"
  # essential/unlink would delete the essential packages' .deb files from the cache. The cache is
  # unmounted in the customize hook, before mmdebstrap's clean-up empties the root's archives.
  mmdebstrap_opts+=(--skip=essential/unlink
    --setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && mount --bind $cache \"\$1/var/cache/apt/archives\""
    --customize-hook="umount \"\$1/var/cache/apt/archives\"")
fi

# --- 1. the root ----------------------------------------------------------------------------------
say "mmdebstrap: Debian 12 (bookworm), variant minbase"
start=$SECONDS status=0
run_step mmdebstrap "${mmdebstrap_opts[@]}" bookworm "$root" "${mirrors[@]}" || status=$?
step_done mmdebstrap "$start" "$status"
((status == 0)) || exit 1
say "the root has $(chroot "$root" dpkg-query -W -f='.\n' | wc -l) packages"

# --- 2. the checkout ------------------------------------------------------------------------------
sha=$("${git[@]}" -C "$repo" rev-parse HEAD)
"${git[@]}" clone --quiet --no-checkout "$repo" "$root/root/benchfp"
"${git[@]}" -C "$root/root/benchfp" checkout --quiet --detach "$sha"
say "cloned $repo at $sha into /root/benchfp"

# --- 3. the README's commands, as root in the root ------------------------------------------------
mount_root

say "setup.sh: scripts/setup.sh"
start=$SECONDS status=0
in_root scripts/setup.sh || status=$?
step_done setup.sh "$start" "$status"

if [[ -z $failed ]]; then
  test_env=(BENCHFP_REQUIRE_PERF=1)
  ((full)) || test_env+=(BENCHFP_GATE_E2E=0 BENCHFP_SANITIZERS=0 BENCHFP_FUZZ=0)
  say "test.sh: ${test_env[*]} scripts/test.sh"
  start=$SECONDS status=0
  in_root scripts/test.sh "${test_env[@]}" || status=$?
  step_done test.sh "$start" "$status"
fi

if [[ -z $failed ]] && ((suite)); then
  say "benchfp: build/benchfp (the default suite)"
  start=$SECONDS status=0
  in_root build/benchfp BENCHFP_REQUIRE_PERF=1 || status=$?
  step_done benchfp "$start" "$status"
fi

# The summary line comes from cleanup, after the root is unmounted and removed.
[[ -z $failed ]] || exit 1
