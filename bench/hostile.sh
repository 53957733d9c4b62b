#!/usr/bin/env bash
# hostile.sh - wall time and peak memory of the hostile-input reproducers of tests/hostile.rs,
# on an optimised binary, with /usr/bin/time -v. Each must stay under 2 s and 200 MB.
#
# Usage: bench/hostile.sh [BINARY]   (default: $CARGO_TARGET_DIR/release/kubectl-quota, built
#        with `cargo build --profile bench --bin kubectl-quota`)
# Prints a Markdown table: case, exit status, wall seconds, max RSS in MB, first line of stderr.
# Needs: python3 (generates the inputs), /usr/bin/time (Debian package `time`).
set -euo pipefail

# shellcheck source=offline-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/offline-common.sh"

python3 - <<'EOF'
state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: default}\nspec: {hard: {pods: '10'}}\nstatus: {hard: {pods: '10'}, used: {pods: '0'}}\n"
pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: b}]}\n"
w = lambda n, t: open(n, "w").write(t)
w("state.yaml", state)
w("pod.yaml", pod)
w("brackets-200k.yaml", "[" * 200_000)
w("brackets-1m.yaml", "[" * 1_000_000)
w("braces-400k.yaml", "{a: " * 100_000)
keys = "".join(f"  k{i}: v\n" for i in range(5000))
refs = "".join(f"r{i}: *a\n" for i in range(6000))
w("bomb-keys.yaml", "base: &a\n" + keys + refs)
w("bomb-string.yaml", "s: &a " + "x" * (1 << 20) + "\nl: [" + ", ".join(["*a"] * 2000) + "]\n")
laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
for i, c in enumerate("bcdefghi"):
    laughs += f"{c}: &{c} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n"
w("laughs.yaml", laughs)
w("dashes.yaml", "- " * 200_000)
w("evil.yaml", pod.replace("{name: web}", '{name: "web\\npod/evil: admitted\\e]0;t\\a"}'))
w("neg.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -5, selector: {}, template: {spec: {containers: [{name: a, image: b}]}}}\n")
tpl = "template: {spec: {containers: [{name: a, image: b, resources: {requests: {cpu: 1m}}}]}}"
w("huge-deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2147483647, selector: {}, " + tpl + "}\n")
w("huge-job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 2147483647, " + tpl + "}\n")
w("huge-sts.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {replicas: 2147483647, selector: {}, serviceName: s, " + tpl + ", volumeClaimTemplates: [{metadata: {name: a}, spec: {resources: {requests: {storage: 1Gi}}}}, {metadata: {name: b}, spec: {resources: {requests: {storage: 1Gi}}}}]}\n")
w("state-nocap.yaml", state.replace("pods: '10'}}", "requests.cpu: '1000000'}}").replace("{hard: {pods: '10'}, used: {pods: '0'}}", "{hard: {requests.cpu: '1000000'}, used: {requests.cpu: '0'}}"))
w("ds.yaml", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec: {selector: {}, " + tpl + "}\n")
w("many.yaml", "".join(state.replace("{name: q,", "{name: q%d," % i) + "---\n" for i in range(3000)))
w("pod-100k.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n" + "".join("  - {name: c%d, image: x}\n" % i for i in range(100000)))
w("pod-120k.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n" + "".join("  - {name: c%d, image: x}\n" % i for i in range(120000)))
w("ns-100k.yaml", "".join(state.replace("namespace: default", "namespace: ns%d" % i) + "---\n" for i in range(100000)))
w("kubeconfig-zero", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {tokenFile: /dev/zero}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
w("kubeconfig-refused", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
EOF
mkdir links && cp pod.yaml links/ && ln -s . links/a && ln -s . links/b

run() { # name, then the command (stdin from $IN when set)
    local name=$1
    shift
    timed "$@"
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$code" "$wall" "$rss" "$(head -c 110 err.txt | head -1 | sed 's/|/\\|/g')"
}

echo "| case | exit | wall s | max RSS MB | stderr (first 110 bytes) |"
echo "|---|---|---|---|---|"
run "200 KB of \`[\`" "$BIN" check -f brackets-200k.yaml --state state.yaml
run "1 MB of \`[\`" "$BIN" check -f brackets-1m.yaml --state state.yaml
run "400 KB of \`{a: \`" "$BIN" check -f braces-400k.yaml --state state.yaml
run "200k \`- \`" "$BIN" check -f dashes.yaml --state state.yaml
run "62 KB anchor, 5k keys x 6k refs" "$BIN" check -f bomb-keys.yaml --state state.yaml
run "1 MB string x 2,000 refs" "$BIN" check -f bomb-string.yaml --state state.yaml
run "billion laughs" "$BIN" check -f laughs.yaml --state state.yaml
run "\`check -f /dev/zero\`" "$BIN" check -f /dev/zero --state state.yaml
IN=/dev/zero run "\`check -f - </dev/zero\`" "$BIN" check -f - --state state.yaml
run "\`--state /dev/zero\`" "$BIN" check -f pod.yaml --state /dev/zero
run "\`--admission-config /dev/zero\`" "$BIN" check -f pod.yaml --state state.yaml --admission-config /dev/zero
run "kubeconfig \`tokenFile: /dev/zero\`" "$BIN" describe --kubeconfig kubeconfig-zero
run "connection refused (describe)" "$BIN" describe --kubeconfig kubeconfig-refused
run "\`--request-timeout=18446744073709551615h\`" "$BIN" describe --kubeconfig kubeconfig-refused --request-timeout=18446744073709551615h
run "name with a newline and OSC" "$BIN" check -f evil.yaml --state state.yaml
run "\`replicas: -5\`" "$BIN" check -f neg.yaml --state state.yaml
run "\`-R\` with two links to \`.\`" "$BIN" check -R -f links --state state.yaml
run "a Pod of 100,000 containers (3.0 MB as JSON, under the server's 3 MiB)" "$BIN" check -f pod-100k.yaml --state state.yaml
run "a Pod of 120,000 containers (3.6 MB as JSON, over the server's 3 MiB)" "$BIN" check -f pod-120k.yaml --state state.yaml
run "\`describe -A --state\`, 100,000 quotas in 100,000 namespaces" "$BIN" describe -A --state ns-100k.yaml
run "same, \`-o json\`" "$BIN" describe -A --state ns-100k.yaml -o json
run "\`replicas: 2147483647\` (Deployment)" "$BIN" check -f huge-deploy.yaml --state state-nocap.yaml
run "\`parallelism: 2147483647\` (Job)" "$BIN" check -f huge-job.yaml --state state-nocap.yaml
run "StatefulSet, 2147483647 replicas, 2 claim templates" "$BIN" check -f huge-sts.yaml --state state-nocap.yaml
run "DaemonSet \`--nodes 1000000000\`" "$BIN" check -f ds.yaml --state state-nocap.yaml --nodes 1000000000
run "DaemonSet \`--nodes 3000000000\`" "$BIN" check -f ds.yaml --state state-nocap.yaml --nodes 3000000000
run "\`describe -A\` of 3,000 quotas \| head -1" sh -c "'$BIN' describe -A --state many.yaml | head -1"
