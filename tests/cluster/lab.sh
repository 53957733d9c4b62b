#!/usr/bin/env bash
# lab.sh - a real Kubernetes control plane on loopback, for kubectl-quota's live tests.
#
# It runs etcd, kube-apiserver and kube-controller-manager, all bound to 127.0.0.1. There is no
# scheduler and no node: pods stay Pending, which is all that quota needs.
#
# Two kinds of release (KQ_LAB_VERSION):
#   1.20  (default) kube-apiserver + kube-controller-manager built once from Debian's `kubernetes`
#         source package, cached keyed by the Debian source version; Debian's etcd-server.
#   1.34, 1.35, 1.36, 1.37, 1.38  all three binaries built once from the Go module proxy by
#         tests/cluster/modern/build.sh (k8s.io/kubernetes v1.3x.y and the etcd that release
#         names), cached in $KQ_LAB_CACHE/k8s-v1.3x.y. They run with the release's own defaults:
#         feature gates and served API versions as a cluster of that release has them, and the
#         same flags (1.38 removed none of them). 1.38 is v1.38.0-beta.0 until the proxy serves
#         a newer one, and cannot be built yet: build.sh names what the proxy refuses.
#
# Usage: tests/cluster/lab.sh COMMAND
#   build     build (or reuse) the binaries
#   up        build if needed, start the cluster, print `export KUBECONFIG=...`
#   down      stop the cluster (TERM, then KILL after KQ_LAB_STOP_TIMEOUT seconds)
#   restart-apiserver  stop and start the API server alone: every watch is cut, and one
#             resumed from before is answered 410 Gone (kube-apiserver.log.1 keeps the old log)
#   status    say whether it is up (exit 0 if up and healthy, 3 if not)
#   env       print `export KUBECONFIG=...`
#   selftest  up, check quota enforcement and the viewer's rights, a second instance with an
#             admission config, then down
#   clean     down, then remove the state directory
#
# Environment:
#   KQ_LAB_VERSION           1.20 | 1.34 | 1.35 | 1.36 | 1.37 | 1.38              [1.20]
#   KQ_LAB_DIR               state: certs, tokens, kubeconfig, logs, etcd data  [/tmp/kubectl-quota-lab]
#   KQ_LAB_PORT              kube-apiserver secure port                           [26443]
#   KQ_LAB_ETCD_PORT         etcd client port; etcd's peer port is this + 1       [22379]
#   KQ_LAB_ADMISSION_CONFIG  file passed as --admission-control-config-file       [unset]
#   KQ_LAB_ALLOW_PRIVILEGED  true | false: passed as kube-apiserver's --allow-privileged;
#                            unset passes nothing: upstream's default, false (privileged
#                            containers refused; most distributions set true)   [unset]
#   KQ_LAB_CACHE             where built binaries are cached                      [/var/cache/kubectl-quota-lab]
#   KQ_LAB_BIN_DIR           use the binaries in this directory, never build      [unset]
#                            (for 1.3x it must hold etcd too)
#   KQ_LAB_STOP_TIMEOUT      seconds to wait after TERM before KILL               [15]
#   KQ_LAB_START_TIMEOUT     seconds to wait for each readiness step              [120]
#   KQ_LAB_KEEP_SRC=1        keep the unpacked source tree after a 1.20 build     [unset]
#
# Several instances may run at once, each with its own KQ_LAB_DIR, KQ_LAB_PORT and
# KQ_LAB_ETCD_PORT (the controller-manager listens on no port).
#
# In $KQ_LAB_DIR after `up`: kubeconfig (contexts `lab` = admin, current, namespace default;
# `viewer` = user viewer bound to ClusterRole view; `nobody` = authenticated, no rights),
# ca.crt, admin.token, viewer.token, nobody.token, version (the KQ_LAB_VERSION it runs), and
# *.log for each process. Every `up` from a stopped state starts from an empty etcd; certs and
# tokens are kept.
#
# Needs root (apt-get) for the 1.20 `build`; the 1.3x build needs the Go module proxy once;
# `up` with a warm cache needs no network.
set -euo pipefail
# The whole script is one block, read before it runs: editing this file while a copy runs (a
# build takes many minutes) cannot change what that copy does next.
{

VERSION=${KQ_LAB_VERSION:-1.20}
case $VERSION in
  1.20 | 1.34 | 1.35 | 1.36 | 1.37 | 1.38) ;;
  *) printf '[lab] ERROR: KQ_LAB_VERSION=%s: want 1.20, 1.34, 1.35, 1.36, 1.37 or 1.38\n' "$VERSION" >&2; exit 2 ;;
esac
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
PORT=${KQ_LAB_PORT:-26443}
ETCD_PORT=${KQ_LAB_ETCD_PORT:-22379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
CACHE=${KQ_LAB_CACHE:-/var/cache/kubectl-quota-lab}
STOP_TIMEOUT=${KQ_LAB_STOP_TIMEOUT:-15}
START_TIMEOUT=${KQ_LAB_START_TIMEOUT:-120}
SERVER=https://127.0.0.1:$PORT
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

TAG=lab PROC_DIR=$LAB_DIR
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------------------------------------
# apt helpers
# ---------------------------------------------------------------------------------------------

APT_UPDATED=
apt_update() {
  [[ -n $APT_UPDATED ]] && return 0
  log "apt-get update"
  apt-get update -q >/dev/null || die "apt-get update failed"
  APT_UPDATED=1
}

# apt_install PKG... : install the packages that are not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) == 0 ]] || die "need root to install: ${missing[*]}"
  # A fresh machine may have no package lists at all.
  if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then apt_update; fi
  log "apt-get install ${missing[*]}"
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt_update; apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; } ||
    die "apt-get install ${missing[*]} failed"
}

have_deb_src() {
  grep -Eqs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
    grep -Eqs '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

# Add deb-src twins of the configured Debian archives (not of third-party repositories, which
# often publish no sources and would make `apt-get update` fail).
add_deb_src() {
  local out=/etc/apt/sources.list.d/kubectl-quota-lab-src.sources f
  log "adding deb-src entries for the Debian archives ($out)"
  : >"$out.tmp"
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -e $f && $f != "$out" ]] || continue
    # deb822: one stanza per paragraph; keep enabled stanzas of type deb on a Debian archive.
    awk 'BEGIN { RS = "" }
         /Types:[^\n]*deb/ && /URIs:[^\n]*debian/ && !/Enabled:[ ]*no/ {
           n = split($0, line, "\n")
           for (i = 1; i <= n; i++) print (line[i] ~ /^Types:/ ? "Types: deb-src" : line[i])
           print "" }' \
      "$f" >>"$out.tmp"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -e $f ]] || continue
    sed -n -E 's/^[[:space:]]*deb[[:space:]]+(.*debian.*)$/deb-src \1/p' "$f" >"$out.list.tmp"
    if [[ -s $out.list.tmp ]]; then cat "$out.list.tmp" >>"${out%.sources}.list"; fi
    rm -f "$out.list.tmp"
  done
  if [[ -s $out.tmp ]]; then mv "$out.tmp" "$out"; else rm -f "$out.tmp"; fi
  have_deb_src || die "found no Debian archive to add a deb-src entry for"
}

# The version of the `kubernetes` source package that `apt-get source` would fetch (no epoch).
# Works offline when the package lists are there; otherwise adds deb-src and updates once.
source_version() {
  local dsc
  dsc=$(apt-get source --print-uris kubernetes 2>/dev/null | awk '$2 ~ /^kubernetes_.*\.dsc$/ { print $2; exit }') || true
  if [[ -z $dsc ]]; then
    [[ $(id -u) == 0 ]] || die "cannot tell the kubernetes source version (no deb-src?) and not root"
    have_deb_src || add_deb_src
    APT_UPDATED=
    apt_update
    dsc=$(apt-get source --print-uris kubernetes 2>/dev/null | awk '$2 ~ /^kubernetes_.*\.dsc$/ { print $2; exit }') || true
    [[ -n $dsc ]] || die "apt-get source --print-uris kubernetes finds no source package"
  fi
  dsc=${dsc#kubernetes_}
  printf '%s\n' "${dsc%.dsc}"
}

# ---------------------------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------------------------

BIN=    # set by build: the directory holding kube-apiserver and kube-controller-manager
ETCD=   # set by build: the etcd command

modern() { [[ $VERSION != 1.20 ]]; }

cmd_build() {
  if modern; then build_modern; else build_120; fi
}

# The 1.3x releases: all three binaries from tests/cluster/modern/build.sh.
build_modern() {
  apt_install openssl curl ca-certificates
  if [[ -n ${KQ_LAB_BIN_DIR:-} ]]; then
    BIN=$KQ_LAB_BIN_DIR
  else
    BIN=$(KQ_LAB_CACHE=$CACHE "$HERE/modern/build.sh" "$VERSION") || die "building Kubernetes $VERSION failed"
  fi
  [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager && -x $BIN/etcd ]] ||
    die "$BIN lacks kube-apiserver, kube-controller-manager or etcd"
  ETCD=$BIN/etcd
}

build_120() {
  ETCD=etcd
  # Runtime needs of `up` first: cheap, and a warm cache must not skip them on a fresh machine.
  apt_install etcd-server openssl curl ca-certificates
  if [[ -n ${KQ_LAB_BIN_DIR:-} ]]; then
    BIN=$KQ_LAB_BIN_DIR
    [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager ]] ||
      die "KQ_LAB_BIN_DIR=$BIN lacks kube-apiserver or kube-controller-manager"
    return 0
  fi
  local ver; ver=$(source_version)
  BIN=$CACHE/$ver
  if [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager ]]; then
    log "reusing cached binaries: $BIN (kubernetes source $ver)"
    return 0
  fi

  mkdir -p "$CACHE"
  # One build at a time per cache, even when two instances start together on a fresh machine.
  exec 8>"$CACHE/.build.lock"
  flock 8
  if [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager ]]; then
    log "reusing cached binaries: $BIN (built meanwhile by another run)"
    exec 8>&-; return 0
  fi

  local t0 work buildlog src
  t0=$(now)
  work=$CACHE/build-$ver
  buildlog=$CACHE/build-$ver.log
  log "building kube-apiserver + kube-controller-manager from Debian source kubernetes $ver"
  log "  work dir $work, log $buildlog (takes several minutes)"
  apt_install golang-go golang-github-modern-go-reflect2-dev make patch rsync diffutils findutils
  rm -rf "$work"; mkdir -p "$work"
  : >"$buildlog"
  # Unpack by hand (no dpkg-dev needed): the upstream .orig tarball, then debian/ and its patch
  # series (kubectl printing fixes, CVE-2021-25743), as dpkg-source -x would.
  (cd "$work" && apt-get source --download-only "kubernetes=$ver") >>"$buildlog" 2>&1 ||
    { tail -n 30 "$buildlog" >&2; die "apt-get source kubernetes=$ver failed"; }
  local orig deb p
  orig=$(find "$work" -maxdepth 1 -name 'kubernetes_*.orig.tar.*' | head -1)
  deb=$(find "$work" -maxdepth 1 -name 'kubernetes_*.debian.tar.*' | head -1)
  [[ -n $orig && -n $deb ]] || die "no .orig or .debian tarball in $work"
  src=$work/src
  mkdir -p "$src"
  tar -xf "$orig" -C "$src" --strip-components=1
  tar -xf "$deb" -C "$src"
  [[ -f $src/cmd/kube-apiserver/apiserver.go ]] || die "unexpected source layout in $orig"
  if [[ -f $src/debian/patches/series ]]; then
    while read -r p _; do
      [[ -z $p || $p == \#* ]] && continue
      echo "applying debian/patches/$p" >>"$buildlog"
      patch -d "$src" -p1 --forward --batch <"$src/debian/patches/$p" >>"$buildlog" 2>&1 ||
        { tail -n 20 "$buildlog" >&2; die "debian/patches/$p does not apply"; }
    done <"$src/debian/patches/series"
  fi

  # Trap: Kubernetes 1.20 vendors modern-go/reflect2 v1.0.1, whose map iteration crashes the
  # apiserver under Go >= 1.18 (unsafe map internals). Debian ships the fixed 1.0.2 sources.
  local r2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [[ -d $r2 ]] || die "$r2 missing (golang-github-modern-go-reflect2-dev)"
  rm -rf "$src/vendor/github.com/modern-go/reflect2"
  cp -r "$r2" "$src/vendor/github.com/modern-go/reflect2"
  rm -f "$src/vendor/github.com/modern-go/reflect2/go.mod" "$src/vendor/github.com/modern-go/reflect2/go.sum"

  # Kubernetes' make sets up its own GOPATH under _output; keep Go's caches in the work dir too.
  # Debian's own Go, named explicitly: /usr/local/go (a newer Go) may come first on PATH, and
  # Kubernetes 1.20 is built with the Go its Debian package is built with (1.19).
  local debgo=/usr/lib/go-1.19/bin
  [[ -x $debgo/go ]] || debgo=$(dirname "$(readlink -f /usr/bin/go)")
  [[ -x $debgo/go ]] || die "Debian's Go (golang-go) is not installed"
  log "make WHAT=\"cmd/kube-apiserver cmd/kube-controller-manager\" (go $("$debgo/go" env GOVERSION), $debgo)"
  if ! (cd "$src" && env PATH="$debgo:$PATH" GOROOT= GOTOOLCHAIN=local HOME="$work/home" GOCACHE="$work/gocache" GOPATH="$work/gopath" \
          GOFLAGS= GO111MODULE= CGO_ENABLED=0 \
          make WHAT="cmd/kube-apiserver cmd/kube-controller-manager") </dev/null >>"$buildlog" 2>&1; then
    log "build FAILED; last lines of $buildlog:"
    tail -n 40 "$buildlog" >&2
    exit 1
  fi
  local out
  out=$src/_output/local/bin/linux/$("$debgo/go" env GOARCH)
  mkdir -p "$BIN.tmp"
  cp "$out/kube-apiserver" "$out/kube-controller-manager" "$BIN.tmp/"
  {
    echo "kubernetes source package: $ver"
    echo "go: $("$debgo/go" version)"
    echo "reflect2: $(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)"
    echo "built: $(date -u +%FT%TZ)"
    "$BIN.tmp/kube-apiserver" --version
  } >"$BIN.tmp/BUILDINFO"
  rm -rf "$BIN"; mv "$BIN.tmp" "$BIN"     # appears atomically: a half copy is never "cached"
  [[ -n ${KQ_LAB_KEEP_SRC:-} ]] || rm -rf "$work"
  exec 8>&-
  log "built in $(since "$t0")s: $BIN ($(head -1 <("$BIN/kube-apiserver" --version)))"
}

# ---------------------------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------------------------

COMPONENTS=(kube-controller-manager kube-apiserver etcd)

# wait_for WHAT CMD...: retry CMD until it succeeds, up to START_TIMEOUT seconds (lib.sh's
# wait_until).
wait_for() {
  local what=$1; shift
  wait_until "$what" "$START_TIMEOUT" "$@"
}

# api METHOD PATH [TOKEN [BODY]]: a call to the apiserver, verified against the lab CA.
# Prints the body, then the HTTP status on the last line.
api() {
  local method=$1 path=$2 token=${3:-$(<"$LAB_DIR/admin.token")} body=${4:-}
  local args=(-sS --cacert "$LAB_DIR/ca.crt" -X "$method" -H "Authorization: Bearer $token"
              -w '\n%{http_code}' --max-time 20)
  [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  curl "${args[@]}" "$SERVER$path"
}
# api_code ...: just the HTTP status.
api_code() { api "$@" | tail -n 1; }

# Predicates for wait_for.
code_is() { local want=$1; shift; [[ $(api_code "$@") == "$want" ]]; }   # code_is WANT METHOD PATH [TOKEN]
# These read all of curl's output before matching: `curl | grep -q` SIGPIPEs curl under pipefail.
sa_has_token() { local out; out=$(api GET "/api/v1/namespaces/$1/serviceaccounts/default") && [[ $out == *'"secrets"'* ]]; }
quota_hard_is() { local out; out=$(api GET "$1" | tr -d ' \n') && [[ $out == *"\"status\":{\"hard\":$2"* ]]; }   # PATH JSON

# healthy: all three processes alive, /readyz answers, and the last `up` finished its checks.
healthy() {
  [[ -f $LAB_DIR/ready ]] && pid_of etcd >/dev/null && pid_of kube-apiserver >/dev/null && pid_of kube-controller-manager >/dev/null &&
    [[ -f $LAB_DIR/ca.crt ]] &&
    curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# credentials
# ---------------------------------------------------------------------------------------------

# A small CA, and a serving certificate signed by it. rustls (the Rust client's TLS) wants a real
# CA (basicConstraints CA:TRUE, keyCertSign), an end-entity leaf (CA:FALSE, serverAuth) and the
# address in subjectAltName: curl accepts less, so `openssl verify -x509_strict` checks it here.
make_certs() {
  local d=$LAB_DIR
  if [[ -f $d/ca.crt && -f $d/apiserver.crt && -f $d/apiserver.key ]] &&
     openssl verify -x509_strict -CAfile "$d/ca.crt" "$d/apiserver.crt" >/dev/null 2>&1; then
    return 0
  fi
  log "generating CA and serving certificate"
  openssl req -x509 -new -nodes -newkey rsa:2048 -sha256 -days 3650 \
    -keyout "$d/ca.key" -out "$d/ca.crt" -subj "/CN=kubectl-quota-lab-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" 2>/dev/null
  cat >"$d/apiserver.ext" <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = IP:127.0.0.1, DNS:localhost, IP:10.96.0.1, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc
EOF
  openssl req -new -nodes -newkey rsa:2048 -sha256 \
    -keyout "$d/apiserver.key" -out "$d/apiserver.csr" -subj "/CN=kube-apiserver" 2>/dev/null
  openssl x509 -req -sha256 -days 3650 -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
    -CAcreateserial -out "$d/apiserver.crt" -extfile "$d/apiserver.ext" 2>/dev/null
  rm -f "$d/apiserver.csr" "$d/apiserver.ext" "$d/ca.srl"
  openssl verify -x509_strict -CAfile "$d/ca.crt" "$d/apiserver.crt" >/dev/null ||
    die "generated serving certificate does not verify"
}

# The front proxy's CA and the client certificate the API server presents when it proxies to
# an aggregated API (metrics-server's metrics.k8s.io): the aggregated server trusts the
# X-Remote-User/-Group headers only from a client certificate of this CA named
# front-proxy-client, which it reads from kube-system/extension-apiserver-authentication. A CA of
# its own, as kubeadm makes it: a client certificate of the cluster CA is no front proxy.
make_front_proxy_certs() {
  local d=$LAB_DIR
  if [[ -f $d/front-proxy-ca.crt && -f $d/front-proxy-client.crt && -f $d/front-proxy-client.key ]] &&
     openssl verify -x509_strict -CAfile "$d/front-proxy-ca.crt" "$d/front-proxy-client.crt" >/dev/null 2>&1; then
    return 0
  fi
  log "generating the front proxy's CA and client certificate"
  openssl req -x509 -new -nodes -newkey rsa:2048 -sha256 -days 3650 \
    -keyout "$d/front-proxy-ca.key" -out "$d/front-proxy-ca.crt" -subj "/CN=kubectl-quota-lab-front-proxy-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" 2>/dev/null
  printf '%s\n' "basicConstraints = critical, CA:FALSE" "keyUsage = critical, digitalSignature, keyEncipherment" \
    "extendedKeyUsage = clientAuth" "authorityKeyIdentifier = keyid" >"$d/front-proxy-client.ext"
  openssl req -new -nodes -newkey rsa:2048 -sha256 \
    -keyout "$d/front-proxy-client.key" -out "$d/front-proxy-client.csr" -subj "/CN=front-proxy-client" 2>/dev/null
  openssl x509 -req -sha256 -days 3650 -in "$d/front-proxy-client.csr" -CA "$d/front-proxy-ca.crt" \
    -CAkey "$d/front-proxy-ca.key" -CAcreateserial -out "$d/front-proxy-client.crt" -extfile "$d/front-proxy-client.ext" 2>/dev/null
  rm -f "$d/front-proxy-client.csr" "$d/front-proxy-client.ext" "$d/front-proxy-ca.srl"
  chmod 600 "$d/front-proxy-ca.key" "$d/front-proxy-client.key"
  openssl verify -x509_strict -CAfile "$d/front-proxy-ca.crt" "$d/front-proxy-client.crt" >/dev/null ||
    die "generated front proxy client certificate does not verify"
}

# Service-account signing key pair, and static tokens (random, kept for the life of $KQ_LAB_DIR).
make_creds() {
  local d=$LAB_DIR u
  if [[ ! -f $d/sa.key || ! -f $d/sa.pub ]]; then
    openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
    openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  fi
  for u in admin viewer nobody kcm; do
    [[ -s $d/$u.token ]] || openssl rand -hex 24 >"$d/$u.token"
  done
  # token,user,uid,"groups"
  {
    echo "$(<"$d/admin.token"),admin,admin,\"system:masters\""
    echo "$(<"$d/viewer.token"),viewer,viewer"
    echo "$(<"$d/nobody.token"),nobody,nobody"
    echo "$(<"$d/kcm.token"),system:kube-controller-manager,kcm,\"system:masters\""
  } >"$d/tokens.csv"
  chmod 600 "$d"/*.key "$d"/*.token "$d/tokens.csv"
}

write_kubeconfigs() {
  local d=$LAB_DIR ca
  ca=$(base64 -w0 <"$d/ca.crt")
  cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: $SERVER
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $(<"$d/admin.token")
- name: viewer
  user:
    token: $(<"$d/viewer.token")
- name: nobody
  user:
    token: $(<"$d/nobody.token")
contexts:
- name: lab
  context: {cluster: lab, user: admin, namespace: default}
- name: viewer
  context: {cluster: lab, user: viewer, namespace: default}
- name: nobody
  context: {cluster: lab, user: nobody, namespace: default}
current-context: lab
EOF
  cat >"$d/kcm.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "$SERVER", certificate-authority-data: $ca}
users:
- name: kcm
  user: {token: $(<"$d/kcm.token")}
contexts:
- name: kcm
  context: {cluster: lab, user: kcm}
current-context: kcm
EOF
  chmod 600 "$d/kubeconfig" "$d/kcm.kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# up / down / status
# ---------------------------------------------------------------------------------------------

cmd_up() {
  local t0; t0=$(now)
  mkdir -p "$LAB_DIR"
  exec 9>"$LAB_DIR/.lock"
  flock 9
  local admission=() adm_file=
  if [[ -n ${KQ_LAB_ADMISSION_CONFIG:-} ]]; then
    [[ -f $KQ_LAB_ADMISSION_CONFIG ]] || die "KQ_LAB_ADMISSION_CONFIG=$KQ_LAB_ADMISSION_CONFIG: no such file"
    adm_file=$(cd "$(dirname "$KQ_LAB_ADMISSION_CONFIG")" && pwd)/$(basename "$KQ_LAB_ADMISSION_CONFIG")
    admission=(--admission-control-config-file="$adm_file")
  fi
  local privileged=() allow=${KQ_LAB_ALLOW_PRIVILEGED:-}
  case $allow in
    '') ;;
    true | false) privileged=(--allow-privileged="$allow") ;;
    *) die "KQ_LAB_ALLOW_PRIVILEGED=$allow: want true or false" ;;
  esac
  if healthy; then
    [[ $(cat "$LAB_DIR/version" 2>/dev/null) == "$VERSION" ]] ||
      die "already up with Kubernetes $(cat "$LAB_DIR/version" 2>/dev/null || echo '?'), not $VERSION; run down first"
    # The apiserver reads the admission config only at start: a different one needs a restart.
    [[ $(cat "$LAB_DIR/admission-config" 2>/dev/null) == "$adm_file" ]] ||
      die "already up with another admission config ($(cat "$LAB_DIR/admission-config" 2>/dev/null || echo none)); run down first"
    [[ $(cat "$LAB_DIR/allow-privileged" 2>/dev/null) == "$allow" ]] ||
      die "already up with another --allow-privileged ($(cat "$LAB_DIR/allow-privileged" 2>/dev/null || echo unset)); run down first"
    log "already up and healthy at $SERVER"
    cmd_env
    return 0
  fi
  # Some but not all of it running (a crash, a killed shell): start over cleanly.
  local c
  for c in "${COMPONENTS[@]}"; do
    if pid_of "$c" >/dev/null; then log "found a partial cluster; stopping it first"; stop_all; break; fi
  done

  cmd_build
  local p
  for p in "$PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
    port_busy "$p" && die "port 127.0.0.1:$p is already in use (set KQ_LAB_PORT / KQ_LAB_ETCD_PORT)"
  done

  make_certs
  make_front_proxy_certs
  make_creds
  write_kubeconfigs
  rm -rf "$LAB_DIR/etcd-data"   # every cluster starts empty
  rm -f "$LAB_DIR"/*.pid "$LAB_DIR/ready"
  printf '%s\n' "$adm_file" >"$LAB_DIR/admission-config"
  printf '%s\n' "$allow" >"$LAB_DIR/allow-privileged"
  printf '%s\n' "$VERSION" >"$LAB_DIR/version"

  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  start etcd "$ETCD" --name lab --data-dir "$LAB_DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "lab=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
  wait_for "etcd health" curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  log "starting kube-apiserver $VERSION on $SERVER${admission:+ (admission config ${admission[0]#*=})}"
  # --insecure-port=0 (1.20; the flag is gone in 1.24+, where there is no insecure port) and
  # --endpoint-reconciler-type=none: no fixed ports, no loopback endpoint noise.
  # --enable-aggregator-routing: the API server reaches a Service (a webhook registered by
  # service, as `guard install` does in the cluster) through its endpoints, never its ClusterIP:
  # the lab has no node, so no pod has an address, and a call fails with "no endpoints" before
  # anything is dialled. (Through the ClusterIP, 10.96.x.x, it would leave loopback.)
  # --requestheader-* and --proxy-client-*: the aggregation layer's front proxy (kubeadm's
  # values), so that an aggregated API (metrics-server, for the node's HPA test) learns who asks.
  # Nothing else is set: feature gates and served API versions are the release's defaults, and
  # --allow-privileged is upstream's (false) unless KQ_LAB_ALLOW_PRIVILEGED says.
  local insecure=(--insecure-port=0)
  modern && insecure=()
  start kube-apiserver "$BIN/kube-apiserver" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$PORT" "${insecure[@]}" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --tls-cert-file="$LAB_DIR/apiserver.crt" --tls-private-key-file="$LAB_DIR/apiserver.key" \
    --client-ca-file="$LAB_DIR/ca.crt" --token-auth-file="$LAB_DIR/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$LAB_DIR/sa.pub" --service-account-signing-key-file="$LAB_DIR/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
    --enable-aggregator-routing=true \
    --requestheader-client-ca-file="$LAB_DIR/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$LAB_DIR/front-proxy-client.crt" --proxy-client-key-file="$LAB_DIR/front-proxy-client.key" \
    --profiling=false "${admission[@]}" "${privileged[@]}"
  wait_for "kube-apiserver /readyz" curl -sf --max-time 2 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz"

  log "starting kube-controller-manager"
  # All default controllers (resourcequota, namespace, replicaset, deployment, serviceaccount,
  # serviceaccount-token, garbagecollector, ...; in 1.3x also resourceclaim, as on a real
  # cluster); no listening ports (--port, the insecure one, exists only in 1.20), no leader
  # election. The HPA controller syncs every 5 s (default 15 s), so that the node's HPA test
  # sees a scale-up within a minute; its other windows keep their defaults (the downscale
  # stabilization of 5 minutes only holds a raised count up, which that test wants).
  local ports=(--port=0 --secure-port=0)
  modern && ports=(--secure-port=0)
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$LAB_DIR/kcm.kubeconfig" --controllers='*' \
    "${ports[@]}" --leader-elect=false \
    --service-account-private-key-file="$LAB_DIR/sa.key" --root-ca-file="$LAB_DIR/ca.crt" \
    --cluster-signing-cert-file="$LAB_DIR/ca.crt" --cluster-signing-key-file="$LAB_DIR/ca.key" \
    --horizontal-pod-autoscaler-sync-period=5s \
    --profiling=false

  # The viewer gets the built-in read-only ClusterRole `view`.
  local crb='{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
    "metadata":{"name":"kubectl-quota-lab-viewer"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
    "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"viewer"}]}'
  local code; code=$(api_code POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings "" "$crb")
  [[ $code == 201 || $code == 409 ]] || die "creating the viewer ClusterRoleBinding: HTTP $code"
  local vt; vt=$(<"$LAB_DIR/viewer.token")
  wait_for "viewer can list resourcequotas" code_is 200 GET /api/v1/namespaces/default/resourcequotas "$vt"
  code=$(api_code POST '/api/v1/namespaces/default/resourcequotas?dryRun=All' "$vt" \
    '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"viewer-probe"},"spec":{"hard":{"pods":"1"}}}')
  [[ $code == 403 ]] || die "viewer should be forbidden to create a ResourceQuota, got HTTP $code"

  # The controllers work once the service-account controllers have made `default` (and, in
  # 1.20, its token Secret; 1.24+ makes no token Secrets, pods get projected tokens instead).
  if modern; then
    wait_for "service account default/default (controller-manager)" code_is 200 GET /api/v1/namespaces/default/serviceaccounts/default
  else
    wait_for "service account default/default with a token (controller-manager)" sa_has_token default
  fi

  touch "$LAB_DIR/ready"
  log "up in $(since "$t0")s: $SERVER ($(api GET /version | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p'))"
  cmd_env
}

cmd_env() { echo "export KUBECONFIG=$LAB_DIR/kubeconfig"; }

# restart-apiserver: the API server killed and started again with the same command line, as
# after a crash; every client's watch is cut. While it is down one key is written
# to etcd (outside /registry), so the store's revision moves on: a watch resumed from before the
# restart is then older than the new API server's watch cache, and is answered 410 Gone, as
# after a long outage. Needs only KQ_LAB_DIR: ports and binary are read from the running one.
cmd_restart_apiserver() {
  local t0 pid argv=() a etcd= port=
  t0=$(now)
  exec 9>"$LAB_DIR/.lock"
  flock 9
  pid=$(pid_of kube-apiserver) || die "kube-apiserver is not running in $LAB_DIR"
  mapfile -d '' argv <"/proc/$pid/cmdline"
  for a in "${argv[@]}"; do
    case $a in
      --etcd-servers=*) etcd=${a#*=} ;;
      --secure-port=*) port=${a#*=} ;;
    esac
  done
  [[ -n $etcd && -n $port ]] || die "kube-apiserver's command line has no --etcd-servers or --secure-port"
  SERVER=https://127.0.0.1:$port
  # KILL, as a crash: a 1.3x API server drains its watches for longer than a test waits.
  kill -KILL "$pid"
  local i; for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
  mv -f "$LAB_DIR/kube-apiserver.log" "$LAB_DIR/kube-apiserver.log.1"
  curl -sf --max-time 5 -X POST "${etcd%%,*}/v3/kv/put" \
    -d "{\"key\":\"$(printf kq-lab-restart | base64)\",\"value\":\"$(date +%s | base64)\"}" >/dev/null ||
    die "writing a key to etcd through its gateway (${etcd%%,*}/v3/kv/put)"
  start kube-apiserver "${argv[@]}"
  wait_for "kube-apiserver /readyz" curl -sf --max-time 2 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz"
  log "kube-apiserver restarted in $(since "$t0")s"
}

# stop_all: the controller-manager and the apiserver first, then etcd (a 1.3x apiserver whose
# etcd is gone keeps retrying it instead of exiting). Each group gets TERM, up to STOP_TIMEOUT
# seconds, then KILL. Nothing else needs order: the etcd data is thrown away at the next `up`.
stop_all() {
  local stopped=()
  stop_group kube-controller-manager kube-apiserver
  stop_group etcd
  ((${#stopped[@]})) && log "stopped ${stopped[*]}"
  local c; for c in "${COMPONENTS[@]}"; do rm -f "$LAB_DIR/$c.pid"; done
  rm -f "$LAB_DIR/ready"
}

# stop_group NAME...: TERM them at once, wait, KILL what is left; appends to stop_all's `stopped`.
stop_group() {
  local c pid pids=() names=() i
  for c in "$@"; do
    if pid=$(pid_of "$c"); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); names+=("$c"); fi
  done
  ((${#pids[@]})) || return 0
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    alive "${pids[@]}" || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[i]}" 2>/dev/null; then
      log "${names[i]} (${pids[i]}) ignored TERM for ${STOP_TIMEOUT}s: KILL"
      kill -KILL "${pids[i]}" 2>/dev/null || true
    fi
  done
  for ((i = 0; i < 50; i++)); do alive "${pids[@]}" || break; sleep 0.1; done
  stopped+=("${names[@]}")
}

cmd_down() {
  local t0; t0=$(now)
  [[ -d $LAB_DIR ]] || { log "not up (no $LAB_DIR)"; return 0; }
  exec 9>"$LAB_DIR/.lock"
  flock 9
  stop_all
  log "down in $(since "$t0")s"
}

cmd_status() {
  local c pid any=
  for c in etcd kube-apiserver kube-controller-manager; do
    if pid=$(pid_of "$c"); then echo "$c: running (pid $pid)"; any=1; else echo "$c: stopped"; fi
  done
  if healthy; then
    echo "lab is UP at $SERVER (state $LAB_DIR, Kubernetes $(cat "$LAB_DIR/version" 2>/dev/null || echo 1.20))"
    cmd_env
    return 0
  fi
  if [[ -n $any ]]; then echo "lab is DEGRADED (run: $0 down; $0 up)"; else echo "lab is DOWN"; fi
  return 3
}

cmd_clean() {
  cmd_down
  log "removing $LAB_DIR"
  rm -rf "$LAB_DIR"
}

# ---------------------------------------------------------------------------------------------
# selftest: the things the live tests rely on, checked against the real thing.
# ---------------------------------------------------------------------------------------------

# expect_code WANT DESC METHOD PATH [TOKEN [BODY]]: the call must answer HTTP WANT.
expect_code() {
  local want=$1 desc=$2 out code; shift 2
  out=$(api "$@"); code=${out##*$'\n'}
  if [[ $code != "$want" ]]; then
    printf '%s\n' "$out" >&2
    die "selftest: $desc: want HTTP $want, got $code"
  fi
  printf '%s\n' "${out%$'\n'*}"
}

pod_json() {   # pod_json NAME [PRIORITY_CLASS]
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{%s"automountServiceAccountToken":false,"containers":[{"name":"c","image":"busybox"}]}}' \
    "$1" "${2:+\"priorityClassName\":\"$2\",}"
}

selftest_main() {
  local ns=lab-selftest vt out
  vt=$(<"$LAB_DIR/viewer.token")
  log "selftest: namespace $ns, ResourceQuota hard pods=2"
  expect_code 201 "create namespace" POST /api/v1/namespaces "" \
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
  expect_code 201 "create quota" POST "/api/v1/namespaces/$ns/resourcequotas" "" \
    '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"2"}}}' >/dev/null
  local t0; t0=$(now)
  wait_for "quota status.hard (resourcequota controller)" \
    quota_hard_is "/api/v1/namespaces/$ns/resourcequotas/q" '{"pods":"2"}'
  log "selftest: status.hard set after $(since "$t0")s"
  # Pods need the namespace's default service account (ServiceAccount admission).
  wait_for "service account $ns/default" code_is 200 GET "/api/v1/namespaces/$ns/serviceaccounts/default"
  expect_code 201 "pod 1" POST "/api/v1/namespaces/$ns/pods" "" "$(pod_json p1)" >/dev/null
  expect_code 201 "pod 2" POST "/api/v1/namespaces/$ns/pods" "" "$(pod_json p2)" >/dev/null
  out=$(expect_code 403 "pod 3 over quota" POST "/api/v1/namespaces/$ns/pods" "" "$(pod_json p3)")
  grep -q 'exceeded quota' <<<"$out" || die "selftest: pod 3 refused, but not with 'exceeded quota': $out"
  log "selftest: third pod refused: $(sed -n 's/.*"message": "\(.*\)",/\1/p' <<<"$out")"
  out=$(expect_code 200 "quota GET" GET "/api/v1/namespaces/$ns/resourcequotas/q")
  tr -d ' \n' <<<"$out" | grep -q '"used":{"pods":"2"}' || die "selftest: quota status.used is not pods=2: $out"

  expect_code 200 "viewer GET quota" GET "/api/v1/namespaces/$ns/resourcequotas/q" "$vt" >/dev/null
  expect_code 200 "viewer LIST quotas (all namespaces)" GET "/api/v1/resourcequotas" "$vt" >/dev/null
  expect_code 403 "viewer POST quota" POST "/api/v1/namespaces/$ns/resourcequotas" "$vt" \
    '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"nope"},"spec":{"hard":{"pods":"1"}}}' >/dev/null
  expect_code 403 "nobody GET quota" GET "/api/v1/namespaces/$ns/resourcequotas/q" "$(<"$LAB_DIR/nobody.token")" >/dev/null
  log "selftest: viewer can GET/LIST but not POST; nobody cannot GET"
  out=$(expect_code 200 "version" GET /version)
  tr -d '\n ' <<<"$out"; echo
  grep -q "\"gitVersion\": \"v$VERSION\." <<<"$out" || die "selftest: the server is not Kubernetes $VERSION: $out"
  if modern; then
    # What a real cluster of a recent release serves by default: DRA's resource.k8s.io/v1 (GA
    # in 1.34), and the controller-manager runs the resourceclaim controller.
    expect_code 200 "resource.k8s.io/v1 served" GET /apis/resource.k8s.io/v1 >/dev/null
    grep -q 'Starting resource claim controller' "$LAB_DIR/kube-controller-manager.log" ||
      die "selftest: kube-controller-manager did not start the resourceclaim controller"
    log "selftest: resource.k8s.io/v1 served, resourceclaim controller started"
  fi
}

selftest_admission() {
  local ns=lab-limited out
  log "selftest (admission instance): PriorityClass cluster-services, namespace $ns without quota"
  expect_code 201 "create PriorityClass" POST /apis/scheduling.k8s.io/v1/priorityclasses "" \
    '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"cluster-services"},"value":1000000}' >/dev/null
  expect_code 201 "create namespace" POST /api/v1/namespaces "" \
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
  wait_for "service account $ns/default" code_is 200 GET "/api/v1/namespaces/$ns/serviceaccounts/default"
  # Kubernetes answers this with a plain error, so HTTP 500 (InternalError), not 403: 1.20
  # and 1.37 alike.
  out=$(expect_code 500 "pod with limited priority class" POST "/api/v1/namespaces/$ns/pods" "" "$(pod_json p1 cluster-services)")
  grep -q 'insufficient quota to match these scopes' <<<"$out" ||
    die "selftest: refused, but not with 'insufficient quota to match these scopes': $out"
  log "selftest: limited pod refused: $(sed -n 's/.*"message": "\(.*\)",/\1/p' <<<"$out")"
  expect_code 201 "pod without priority class" POST "/api/v1/namespaces/$ns/pods" "" "$(pod_json p2)" >/dev/null
}

cmd_selftest() {
  local t0; t0=$(now)
  if healthy; then die "selftest: a lab is already up at $SERVER; run down first, or set KQ_LAB_DIR/KQ_LAB_PORT/KQ_LAB_ETCD_PORT"; fi
  "$HERE/lab.sh" up >/dev/null
  trap '"$HERE/lab.sh" down' EXIT
  selftest_main
  "$HERE/lab.sh" down
  trap - EXIT

  # A second instance beside the first's ports, with limitedResources configured.
  local adm=${KQ_LAB_SELFTEST_ADMISSION:-$HERE/../../../shared/conformance/4000-s-limited-scope-no-quota/admission.yaml}
  if [[ ! -f $adm ]]; then adm=$LAB_DIR-admission.yaml; write_limited_admission "$adm"; fi
  export KQ_LAB_DIR=$LAB_DIR-2 KQ_LAB_PORT=$((PORT + 1)) KQ_LAB_ETCD_PORT=$((ETCD_PORT + 10)) KQ_LAB_ADMISSION_CONFIG=$adm
  LAB_DIR=$KQ_LAB_DIR PROC_DIR=$KQ_LAB_DIR PORT=$KQ_LAB_PORT SERVER=https://127.0.0.1:$KQ_LAB_PORT
  "$HERE/lab.sh" up >/dev/null
  trap '"$HERE/lab.sh" down' EXIT
  selftest_admission
  "$HERE/lab.sh" down
  trap - EXIT
  log "selftest PASSED in $(since "$t0")s"
  echo "2 passed, 0 failed"
}

# The same limitedResources as the conformance case, for a clone without shared/ beside it.
write_limited_admission() {
  cat >"$1" <<'EOF'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: PriorityClass
        operator: In
        values: ["cluster-services"]
EOF
}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

case ${1:-} in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  restart-apiserver) cmd_restart_apiserver ;;
  status) cmd_status ;;
  env) cmd_env ;;
  selftest) cmd_selftest ;;
  clean) cmd_clean ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
exit
}
