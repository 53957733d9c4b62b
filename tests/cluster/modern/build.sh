#!/usr/bin/env bash
# modern/build.sh - builds (or reuses) kube-apiserver, kube-controller-manager and etcd of a
# recent Kubernetes release from the Go module proxy, for tests/cluster/lab.sh.
#
# Usage: tests/cluster/modern/build.sh MINOR [--modules-only | --node]   (MINOR: 1.34 ... 1.38)
# Prints the directory holding the three binaries on stdout; logs go to stderr. With
# --modules-only it only generates the release's Go modules (if missing) and builds nothing.
# With --node it builds (or reuses) the node's binaries of the same release, kubelet and
# kube-scheduler, for tests/cluster/node.sh, and prints their directory: a separate cached step
# ($KQ_LAB_CACHE/k8s-vX.Y.Z-node, its own lock), taken after the server build so that the two
# share the Go build cache, and never invalidating the server's cache. Only releases whose module
# lists cmd/kubelet and cmd/kube-scheduler as tools can (1.37 today).
#
# Each release has two small Go modules of ours beside this script, committed with their
# go.sum so that a build is reproducible:
#   k8s-vX.Y.Z/go.mod   requires k8s.io/kubernetes vX.Y.Z, replaces every staging module
#                       (k8s.io/api, apiserver, client-go, ...) by its published v0.Y.Z, and
#                       names the commands as `tool`s so `go mod tidy` keeps their imports
#                       (1.37 also kubelet and kube-scheduler, for the lab's node).
#   etcd-vA.B.C/go.mod  requires go.etcd.io/etcd/server/v3 at the etcd release that Kubernetes
#                       release names in its build/dependencies.yaml (its main package is etcd).
# A missing module is generated once (go get -tool, go mod tidy) and should then be committed.
# A release whose kube-apiserver or kube-controller-manager imports a module the proxy refuses
# cannot be generated: that fails within a minute, before any compiling, naming each refused
# module and what to do (1.38.0-beta.0 today: see tests/cluster/README.md).
#
# Binaries are cached outside the work tree: $KQ_LAB_CACHE/k8s-vX.Y.Z/{kube-apiserver,
# kube-controller-manager,etcd,BUILDINFO}; the directory appears atomically (built in .tmp, then
# renamed) under a per-release lock, so concurrent callers build once.
#
# Environment:
#   KQ_LAB_CACHE   binary cache                         [/var/cache/kubectl-quota-lab]
#   GOMODCACHE     Go module cache                      [/var/cache/kubectl-quota-go/mod]
#   GOCACHE        Go build cache                       [/var/cache/kubectl-quota-go/build]
#   KQ_GO          the go command                       [/usr/local/go/bin/go, else go on PATH]
# GOTOOLCHAIN is `local` (that go), except for a release whose line in the table below names a
# TOOLCHAIN (1.38: go1.27.3, which go fetches from the module proxy once).
set -euo pipefail
# The whole script is one block, read before it runs: editing this file while a copy runs (a
# build takes many minutes) cannot change what that copy does next.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_LAB_CACHE:-/var/cache/kubectl-quota-lab}
TAG=build
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
go_env

# The release built for each minor, and the etcd its build/dependencies.yaml names. This table
# is the one place a release is named. Two more settings, for a release that needs them:
#   TOOLCHAIN  the Go that builds it when /usr/local/go is too old for its go.mod: GOTOOLCHAIN is
#              set to it for this release only, and go fetches it from the module proxy (as the
#              module golang.org/toolchain, into GOMODCACHE) the first time
#   SUBST      MODULE@PINNED=SERVED ...: a dependency whose pinned version the proxy refuses,
#              and the served version put in its place (a `replace` in the generated go.mod).
#              Applied only when the module is generated and only while PINNED is refused.
TOOLCHAIN= SUBST=
case ${1:-} in
  1.34) K8S=v1.34.4 ETCD=v3.6.5 ;;
  1.35) K8S=v1.35.4 ETCD=v3.6.6 ;;
  1.36) K8S=v1.36.3 ETCD=v3.6.8 ;;
  1.37) K8S=v1.37.2 ETCD=v3.7.0 ;;
  # Not released yet: the newest 1.38 the proxy serves (docs/kubernetes-1.38.md). When it serves
  # a newer one (v1.38.0-rc.0, -rc.1, v1.38.0), change K8S here (and ETCD if that release's
  # build/dependencies.yaml names another: the generation checks it) and run `build.sh 1.38`.
  # structured-merge-diff v7.0.1 (pinned by the staging modules) has its zip refused, v7.0.0 is
  # served; tests/oracle's 1.38 build makes the same substitution.
  1.38) K8S=v1.38.0-beta.0 ETCD=v3.7.1 TOOLCHAIN=go1.27.3 SUBST=sigs.k8s.io/structured-merge-diff/v7@v7.0.1=v7.0.0 ;;
  *) die "usage: $0 1.34|1.35|1.36|1.37|1.38" ;;
esac
if [[ -n $TOOLCHAIN ]]; then export GOTOOLCHAIN=$TOOLCHAIN; fi
MINOR=${K8S#v1.}; MINOR=${MINOR%%.*}
STAGING=v0.${K8S#v1.}
BIN=$CACHE/k8s-$K8S
KMOD=$HERE/k8s-$K8S
EMOD=$HERE/etcd-$ETCD

gomod() { (cd "$1" && GOFLAGS=-mod=mod nice -n 10 "$GO" "${@:2}"); }

# refusals LOG: the modules a go command's LOG says the proxy would not give, one line each:
# `MODULE@VERSION HTTP-STATUS FILE COMMAND...` (FILE: info, mod or zip; COMMAND: the
# k8s.io/kubernetes/cmd/... whose import chain reached it, none when the chain names no command).
refusals() {
  awk -v proxy="$(proxy)/" '
    /^go: k8s\.io\/kubernetes\/cmd\/[a-z-]+ imports$/ { cmd = $2; sub(/.*\/cmd\//, "", cmd); next }
    match($0, /reading [^ ]+\/@v\/[^ ]+: [0-9][0-9][0-9]/) {
      s = substr($0, RSTART + 8, RLENGTH - 8)            # URL: STATUS
      code = substr(s, length(s) - 2); url = substr(s, 1, length(s) - 5)
      i = index(url, "/@v/"); path = substr(url, 1, i - 1); file = substr(url, i + 4)
      if (index(path, proxy) == 1) path = substr(path, length(proxy) + 1)
      else sub(/^[a-z]+:\/\/[^\/]+\//, "", path)
      while (match(path, /![a-z]/))                     # the proxy protocol escapes capitals as !x
        path = substr(path, 1, RSTART - 1) toupper(substr(path, RSTART + 1, 1)) substr(path, RSTART + 2)
      ext = file; sub(/^.*\./, "", ext); sub(/\.[a-z]+$/, "", file)
      key = path "@" file " " code " " ext
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      if (cmd != "" && !((key, cmd) in cmds)) { cmds[key, cmd] = 1; list[key] = list[key] " " cmd }
      cmd = ""
    }
    END { for (i = 1; i <= n; i++) print order[i] (list[order[i]] == "" ? " none" : list[order[i]]) }
  ' "$1"
}

# versions MODULE: the versions the proxy lists for MODULE, or why it lists none.
versions() {
  local out
  if out=$(cd / && GOFLAGS=-mod=mod "$GO" list -m -versions "$1" 2>&1); then
    out=${out#"$1"}; echo "versions listed:${out:- none}"
  else
    out=$(grep -o '[0-9][0-9][0-9] [A-Z][A-Za-z ]*' <<<"$out" | head -n 1); echo "no version listed: HTTP ${out:-error}"
  fi
}

# refused_report LINE...: each refusals line as a log line.
refused_report() {
  local r mod code ext c
  for r in "$@"; do
    read -r mod code ext c <<<"$r"
    log "  $mod: HTTP $code for its .$ext; imported by ${c// /, }; $(versions "${mod%@*}")"
  done
}

# refused_help: what to do when the proxy refuses what the release needs.
refused_help() {
  local served
  served=$(versions k8s.io/kubernetes | tr ' ' '\n' | grep "^v1\.$MINOR\." | tr '\n' ' ') || true
  log "A refusal is final for that version: only a newer 1.$MINOR release can bring what is missing."
  log "The proxy serves these 1.$MINOR releases of k8s.io/kubernetes: ${served:-none }(curl $(proxy)/k8s.io/kubernetes/@v/list)."
  log "When it serves a newer one (rc, or the release), set K8S (and ETCD) on the 1.$MINOR line of"
  log "tests/cluster/modern/build.sh and run again: tests/cluster/modern/build.sh 1.$MINOR"
}

proxy() { "$GO" env GOPROXY | cut -d, -f1; }

# gen_k8s: the Kubernetes module, from k8s.io/kubernetes' own go.mod: each `k8s.io/X => ./staging/...`
# replace there becomes `k8s.io/X => k8s.io/X v0.Y.Z` here. A release whose servers need a module
# the proxy refuses fails here, after the module download and no compiling, with each refused
# module named; one that only the node's kubelet or kube-scheduler needs leaves the node out of
# the module (--node then says so), and the servers are built.
gen_k8s() {
  log "generating $KMOD/go.mod (k8s.io/kubernetes $K8S, staging $STAGING${TOOLCHAIN:+, Go $TOOLCHAIN})"
  # Made outside the work tree (a release that cannot be built leaves nothing there); its log
  # is kept only when it fails.
  local tmp up dir json
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/kq-gen-k8s-$K8S.XXXXXX")
  json=$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@$K8S") || true
  up=$(sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p' <<<"$json")
  dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$json")
  if [[ ! -f $up || ! -d $dir ]]; then
    log "the Go module proxy does not give k8s.io/kubernetes@$K8S: $(sed -n 's/^\t"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$json" | sed 's/\\n\\t/; /g')"
    refused_help
    rm -rf "$tmp"
    die "cannot download k8s.io/kubernetes@$K8S"
  fi
  # The etcd this release names, checked against the table above before anything else is fetched.
  local want
  want=$(awk '/name: "etcd"/ { getline; print $2; exit }' "$dir/build/dependencies.yaml")
  [[ v$want == "$ETCD" ]] || { rm -rf "$tmp";
    die "k8s.io/kubernetes $K8S names etcd $want in build/dependencies.yaml, the table says $ETCD (set ETCD=v$want on its line)"; }
  (cd "$tmp" && "$GO" mod init "kubectl-quota.test/lab/k8s-$K8S" 2>/dev/null)
  local gover; gover=$(awk '$1 == "go" { print $2; exit }' "$up")
  gomod "$tmp" mod edit -go="$gover" -require="k8s.io/kubernetes@$K8S"
  local m n=0
  for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$up"); do
    gomod "$tmp" mod edit -replace="$m=$m@$STAGING"; n=$((n + 1))
  done
  ((n > 10)) || die "found only $n staging replaces in k8s.io/kubernetes@$K8S's go.mod"
  local sub mod pinned alt err
  for sub in $SUBST; do
    mod=${sub%%@*} pinned=${sub#*@}; pinned=${pinned%%=*}; alt=${sub##*=}
    json=$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "$mod@$pinned") || true
    err=$(sed -n 's/^\t"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
    if [[ -z $err ]]; then
      log "$mod@$pinned is served now: no substitute"
    elif [[ $err =~ :\ (403|404|410)\  ]]; then
      log "$mod@$pinned is refused (HTTP ${BASH_REMATCH[1]}): replaced by $alt"
      gomod "$tmp" mod edit -replace="$mod=$mod@$alt"
    else
      die "cannot tell whether the proxy serves $mod@$pinned: $err"
    fi
  done

  # The commands as tools: the servers' and the node's at once, so that one failure names every
  # module the proxy refuses.
  local cmd=k8s.io/kubernetes/cmd c r ref=() fatal=() nodeonly=()
  if ! gomod "$tmp" get -tool "$cmd/kube-apiserver@$K8S" "$cmd/kube-controller-manager@$K8S" \
         "$cmd/kubelet@$K8S" "$cmd/kube-scheduler@$K8S" >"$tmp.log" 2>&1; then
    mapfile -t ref < <(refusals "$tmp.log")
    ((${#ref[@]})) || { tail -n 30 "$tmp.log" >&2; die "go get -tool of k8s.io/kubernetes@$K8S's commands failed (log: $tmp.log)"; }
    for r in "${ref[@]}"; do
      read -r _ _ _ c <<<"$r"
      if [[ " $c " =~ \ (kube-apiserver|kube-controller-manager|none)\  ]]; then fatal+=("$r"); else nodeonly+=("$r"); fi
    done
    if ((${#fatal[@]})); then
      log "Kubernetes $K8S cannot be built here: the Go module proxy ($(proxy)) refuses"
      refused_report "${ref[@]}"
      refused_help
      rm -rf "$tmp"
      die "Kubernetes $K8S: the proxy refuses ${#ref[@]} module(s) that its commands import (log: $tmp.log)"
    fi
    log "no node for $K8S: the proxy refuses what the node's commands import:"
    refused_report "${nodeonly[@]}"
    gomod "$tmp" get -tool "$cmd/kube-apiserver@$K8S" "$cmd/kube-controller-manager@$K8S" >"$tmp.log" 2>&1 ||
      { tail -n 30 "$tmp.log" >&2; die "go get -tool of kube-apiserver and kube-controller-manager $K8S failed (log: $tmp.log)"; }
  fi
  # A strict tidy, or, when all it lacks is modules the proxy refuses that only tests import
  # (1.38's k8s.io/ktesting), tidy -e, and `go list -deps` proves the commands' imports complete.
  if ! gomod "$tmp" mod tidy >"$tmp.log" 2>&1; then
    mapfile -t ref < <(refusals "$tmp.log")
    ((${#ref[@]})) || { tail -n 30 "$tmp.log" >&2; die "go mod tidy failed (log: $tmp.log)"; }
    log "go mod tidy -e: the proxy refuses $(for r in "${ref[@]}"; do printf '%s ' "${r%% *}"; done)(imported by tests only)"
    gomod "$tmp" mod tidy -e >"$tmp.log" 2>&1 || { tail -n 30 "$tmp.log" >&2; die "go mod tidy -e failed (log: $tmp.log)"; }
    (cd "$tmp" && GOFLAGS=-mod=readonly "$GO" list -deps $(awk '$1 == "tool" { print $2 }' go.mod) >/dev/null) ||
      die "after go mod tidy -e the module of $K8S does not give its commands every import"
  fi
  rm -f "$tmp.log"
  chmod 755 "$tmp"
  rm -rf "$KMOD"; mv "$tmp" "$KMOD"
}

gen_etcd() {
  log "generating $EMOD/go.mod (go.etcd.io/etcd/server/v3 $ETCD)"
  local tmp=$EMOD.tmp up
  rm -rf "$tmp"; mkdir -p "$tmp"
  up=$(cd "$tmp" && "$GO" mod download -json "go.etcd.io/etcd/server/v3@$ETCD" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $up ]] || die "cannot download go.etcd.io/etcd/server/v3@$ETCD"
  (cd "$tmp" && "$GO" mod init "kubectl-quota.test/lab/etcd-$ETCD" 2>/dev/null)
  gomod "$tmp" mod edit -go="$(awk '$1 == "go" { print $2; exit }' "$up")"
  gomod "$tmp" get -tool "go.etcd.io/etcd/server/v3@$ETCD" >&2
  gomod "$tmp" mod tidy >&2
  rm -rf "$EMOD"; mv "$tmp" "$EMOD"
}

if [[ ${2:-} == --modules-only ]]; then
  [[ -f $KMOD/go.mod && -f $KMOD/go.sum ]] || gen_k8s
  [[ -f $EMOD/go.mod && -f $EMOD/go.sum ]] || gen_etcd
  exit 0
fi

if [[ ${2:-} == --node ]]; then
  # A module not generated yet is generated first: a release the proxy cannot give stops there,
  # with its list of refused modules.
  [[ -f $KMOD/go.mod && -f $KMOD/go.sum ]] || "$0" "$1" --modules-only || exit 1
  grep -q 'k8s.io/kubernetes/cmd/kubelet$' "$KMOD/go.mod" && grep -q 'k8s.io/kubernetes/cmd/kube-scheduler$' "$KMOD/go.mod" ||
    die "$KMOD/go.mod does not list cmd/kubelet and cmd/kube-scheduler as tools: no node for $K8S"
  NODE=$CACHE/k8s-$K8S-node
  node_complete() { [[ -x $NODE/kubelet && -x $NODE/kube-scheduler && -f $NODE/BUILDINFO ]]; }
  if node_complete; then
    log "reusing cached node binaries: $NODE"
    echo "$NODE"; exit 0
  fi
  # The server's build first (or its wait on its lock): the node's binaries share most packages.
  "$0" "$1" >/dev/null
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.build-k8s-$K8S-node.lock"
  flock 8
  if node_complete; then
    log "reusing cached node binaries: $NODE (built meanwhile by another run)"
    echo "$NODE"; exit 0
  fi
fi

complete() { [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager && -x $BIN/etcd && -f $BIN/BUILDINFO ]]; }

if [[ ${2:-} != --node ]]; then
  if complete; then
    log "reusing cached binaries: $BIN"
    echo "$BIN"; exit 0
  fi
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.build-k8s-$K8S.lock"
  flock 8
  if complete; then
    log "reusing cached binaries: $BIN (built meanwhile by another run)"
    echo "$BIN"; exit 0
  fi
fi

[[ -f $KMOD/go.mod && -f $KMOD/go.sum ]] || gen_k8s
[[ -f $EMOD/go.mod && -f $EMOD/go.sum ]] || gen_etcd

TMP=$BIN.tmp
[[ ${2:-} == --node ]] && TMP=$NODE.tmp
rm -rf "$TMP"; mkdir -p "$TMP"
# What `make` would stamp in (hack/lib/version.sh): the server's /version must say the release.
X=
for k in gitVersion=$K8S gitMajor=1 gitMinor=$MINOR gitTreeState=clean buildDate=$(date -u +%FT%TZ); do
  X+=" -X k8s.io/component-base/version.$k -X k8s.io/client-go/pkg/version.$k"
done
declare -A secs
build_one() {   # build_one MODULE_DIR PACKAGE OUTPUT [GO FLAGS...]
  local t0; t0=$(now)
  log "go build $2 (module $(basename "$1"))"
  (cd "$1" && nice -n 10 "$GO" build -trimpath "${@:4}" -o "$TMP/$3" "$2") >&2 ||
    die "go build $2 failed"
  secs[$3]=$(since "$t0")
  log "  $3: ${secs[$3]}s"
}
if [[ ${2:-} == --node ]]; then
  build_one "$KMOD" k8s.io/kubernetes/cmd/kubelet kubelet -ldflags="-s -w$X"
  build_one "$KMOD" k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler -ldflags="-s -w$X"
  {
    echo "kubernetes: $K8S (k8s.io/kubernetes from the Go module proxy, staging $STAGING): the node's binaries"
    echo "go: $("$GO" version)"
    echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
    echo "seconds: kubelet ${secs[kubelet]} kube-scheduler ${secs[kube-scheduler]}"
    "$TMP/kubelet" --version
  } >"$TMP/BUILDINFO"
  "$TMP/kubelet" --version | grep -qx "Kubernetes $K8S" || die "kubelet says $("$TMP/kubelet" --version), not $K8S"
  rm -rf "$NODE"; mv "$TMP" "$NODE"
  exec 8>&-
  log "built $NODE"
  echo "$NODE"
  exit 0
fi
build_one "$KMOD" k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver -ldflags="-s -w$X"
build_one "$KMOD" k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager -ldflags="-s -w$X"
build_one "$EMOD" go.etcd.io/etcd/server/v3 etcd -ldflags="-s -w"
{
  echo "kubernetes: $K8S (k8s.io/kubernetes from the Go module proxy, staging $STAGING)"
  echo "etcd: $ETCD (go.etcd.io/etcd/server/v3)"
  echo "go: $("$GO" version)"
  echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
  echo "seconds: kube-apiserver ${secs[kube-apiserver]} kube-controller-manager ${secs[kube-controller-manager]} etcd ${secs[etcd]}"
  "$TMP/kube-apiserver" --version
  "$TMP/etcd" --version | sed -n 1p    # sed reads it all: no SIGPIPE for pipefail
} >"$TMP/BUILDINFO"
"$TMP/kube-apiserver" --version | grep -qx "Kubernetes $K8S" || die "kube-apiserver says $("$TMP/kube-apiserver" --version), not $K8S"
rm -rf "$BIN"; mv "$TMP" "$BIN"     # appears atomically: a half build is never "cached"
exec 8>&-
log "built $BIN"
echo "$BIN"
exit
}
