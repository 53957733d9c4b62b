# tests/cluster/lib.sh - the steps every harness script here shares: log lines, processes started
# detached with pid files, readiness waits, ports, and the Go environment of the builds.
# Sourced. The caller sets TAG (its log prefix: lab, node, keda, vpa, build) and, before it
# starts or waits for anything, PROC_DIR (where its pid files and logs are) and COMPONENTS (the
# processes it starts, whose death ends a wait early).

log() { printf '[%s] %s\n' "$TAG" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$TAG" "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# pid_of NAME [PIDFILE]: the pid in PIDFILE (PROC_DIR/NAME.pid) while that process is alive and
# its argv0's basename is still NAME.
pid_of() {
  local f=${2:-$PROC_DIR/$1.pid} pid argv0
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  argv0=$(head -z -n 1 "/proc/$pid/cmdline" 2>/dev/null | tr -d '\0') || return 1
  [[ ${argv0##*/} == "$1" ]] || return 1
  echo "$pid"
}

# start_detached NAME PIDFILE PROC CMD...: CMD in its own session (stdin /dev/null, no inherited
# lock descriptors 6-9), output to PROC_DIR/NAME.log. The wrapper writes its pid and execs, so
# PIDFILE names the real process; returns once it runs as PROC (argv0's basename: until the
# exec, /proc/PID/cmdline names the wrapper, and a wait would take a busy machine's slow exec
# for an exit; a CMD that starts with `env` execs once more).
start_detached() {
  local name=$1 pidfile=$2 proc=$3 i; shift 3
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # expanded by the inner bash
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" \
    </dev/null >"$PROC_DIR/$name.log" 2>&1 6>&- 7>&- 8>&- 9>&- &
  for i in $(seq 100); do pid_of "$proc" "$pidfile" >/dev/null && return 0; sleep 0.1; done
  die "$name did not start"
}

# start NAME CMD...: start_detached with the pid file PROC_DIR/NAME.pid, running as NAME.
start() {
  local name=$1; shift
  start_detached "$name" "$PROC_DIR/$name.pid" "$name" "$@"
}

# wait_until WHAT SECONDS CMD...: retry CMD every 0.5 s until it succeeds, up to SECONDS; fails
# early, with its log's tail, when one of COMPONENTS that was started has died.
wait_until() {
  local what=$1 secs=$2 deadline c; shift 2
  deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    for c in "${COMPONENTS[@]}"; do
      if [[ -f $PROC_DIR/$c.pid ]] && ! pid_of "$c" >/dev/null; then
        log "$c exited while waiting for $what; tail of $PROC_DIR/$c.log:"
        tail -n 30 "$PROC_DIR/$c.log" >&2
        exit 1
      fi
    done
    (($(date +%s) < deadline)) || die "timed out after ${secs}s waiting for $what"
    sleep 0.5
  done
}

# port_busy PORT: something listens on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# alive PID...: true if any of them still runs.
alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

# go_env: the environment of every Go build here (caches outside the work tree, the installed
# toolchain, modules read-only, static binaries), and GO, the go command. modern/build.sh sets
# GOTOOLCHAIN after this for a release that needs a newer Go than the installed one (1.38).
go_env() {
  export GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod}
  export GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build}
  export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 LC_ALL=C
  GO=${KQ_GO:-/usr/local/go/bin/go}
  [[ -x $GO ]] || GO=$(command -v go) || die "no go command"
}
