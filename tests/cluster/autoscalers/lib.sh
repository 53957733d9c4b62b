# autoscalers/lib.sh - what keda.sh and vpa.sh share beyond ../lib.sh (processes, waits): their
# components stopped TERM then KILL, certificates, the lab's API, and the commands' dispatch.
# Sourced; the caller sets NAME_TAG (log prefix), STATE (its directory), LAB_DIR, COMPONENTS.

TAG=$NAME_TAG PROC_DIR=$STATE
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# wait_for WHAT SECONDS CMD...: lib.sh's wait_until.
wait_for() { wait_until "$@"; }

# stop_all: TERM every component, wait up to 15 s, KILL what is left.
stop_all() {
  local c pid pids=() names=() i
  for c in "${COMPONENTS[@]}"; do
    if pid=$(pid_of "$c"); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); names+=("$c"); fi
  done
  if ((${#pids[@]})); then
    for ((i = 0; i < 150; i++)); do
      local any=0 p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && any=1; done
      ((any)) || break
      sleep 0.1
    done
    for i in "${!pids[@]}"; do
      kill -0 "${pids[i]}" 2>/dev/null && { log "${names[i]} ignored TERM: KILL"; kill -KILL "${pids[i]}" 2>/dev/null || true; }
    done
    log "stopped ${names[*]}"
  fi
  for c in "${COMPONENTS[@]}"; do rm -f "$STATE/$c.pid"; done
}

# kc ARGS...: kubectl as the lab's admin, bounded.
kc() { timeout 60 kubectl --kubeconfig "$LAB_DIR/kubeconfig" --request-timeout=30s "$@"; }

# make_ca DIR: a CA (ca.crt, ca.key) in DIR, once.
make_ca() {
  local d=$1
  [[ -f $d/ca.crt && -f $d/ca.key ]] && return 0
  openssl req -x509 -new -nodes -newkey rsa:2048 -sha256 -days 3650 -keyout "$d/ca.key" -out "$d/ca.crt" \
    -subj "/CN=kubectl-quota-lab-$NAME_TAG-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  chmod 600 "$d/ca.key"
}

# make_leaf DIR NAME CN SAN: NAME.crt/NAME.key signed by DIR's CA, for server and client use.
make_leaf() {
  local d=$1 n=$2
  if [[ -f $d/$n.crt && -f $d/$n.key ]] && openssl verify -CAfile "$d/ca.crt" "$d/$n.crt" >/dev/null 2>&1 &&
     openssl x509 -in "$d/$n.crt" -noout -ext subjectAltName 2>/dev/null | grep -qF "$(cut -d, -f1 <<<"$4" | sed 's/^IP:/IP Address:/')"; then
    return 0
  fi
  printf '%s\n' 'basicConstraints = critical, CA:FALSE' 'keyUsage = critical, digitalSignature, keyEncipherment' \
    'extendedKeyUsage = serverAuth, clientAuth' "subjectAltName = $4" >"$d/$n.ext"
  openssl req -new -nodes -newkey rsa:2048 -sha256 -keyout "$d/$n.key" -out "$d/$n.csr" -subj "/CN=$3" 2>/dev/null
  openssl x509 -req -sha256 -days 3650 -in "$d/$n.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -out "$d/$n.crt" -extfile "$d/$n.ext" 2>/dev/null
  rm -f "$d/$n.csr" "$d/$n.ext" "$d/ca.srl"
  chmod 600 "$d/$n.key"
}

# lab_up: the lab answers.
lab_up() { [[ -f $LAB_DIR/kubeconfig ]] && kc get --raw /readyz >/dev/null 2>&1; }

# apply_crds DIR: the module's CRDs, server-side. A server older than the CRDs' fields (1.20 has
# no x-kubernetes-validations, CEL is 1.25+) refuses them there; then they are applied
# client-side without kubectl's schema check, and that server drops what it does not know, as
# it would for anyone applying them to such a cluster.
apply_crds() {
  kc apply --server-side --force-conflicts -f "$1" >/dev/null 2>"$STATE/apply-crds.err" && return 0
  log "the lab refuses fields of the CRDs ($(head -c 200 "$STATE/apply-crds.err")): applying them without client validation; the server drops what it does not know"
  kc apply --validate=false -f "$1" >/dev/null
}

# locked_down STEP...: `down`: the steps in order under the state directory's lock, timed.
locked_down() {
  [[ -d $STATE ]] || { log "not up (no $STATE)"; return 0; }
  local t0 step; t0=$(now)
  exec 9>"$STATE/.lock"; flock 9
  for step in "$@"; do "$step"; done
  log "down in $(since "$t0")s"
}

# dispatch SCRIPT ENV_NAME COMMAND: a script's commands (build, up, down, status, env, help),
# ENV_NAME the variable `env` and `up` print for the tests.
dispatch() {
  local script=$1 env=$2
  case ${3:-} in
    build) build ;;
    up) cmd_up ;;
    down) cmd_down ;;
    status) if cmd_status; then log "up"; else log "not up"; exit 3; fi ;;
    env) echo "export $env=$STATE" ;;
    *) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$script"; [[ ${3:-} == help ]] ;;
  esac
}
