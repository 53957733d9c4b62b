//! Table-driven tests of the admission rules the recorded corpus (tests/conformance) lacks or
//! pins only loosely. One test per behaviour; each row is (what, input, expected).
//!
//! Expected values come from the semantics reference
//! (/work/shared/reference/quota-semantics.md, cited as §n) or from the upstream source named
//! in a comment, never from what the tool prints. Tests marked `//! upstream behaviour the tool does not follow yet.
//!
//! Everything runs in namespace `ns`. A quota is written `quota(name, spec, "key=hard/used ...")`:
//! `pods=5/3` is hard 5 with 3 used, `pods=5` a hard value the controller has not computed a
//! used value for; `spec` adds `scopes` / `scopeSelector` (see `sel`).

use std::fmt::Write as _;

use kubectl_quota::admission::QuotaVerdict;
use kubectl_quota::check::{self, CheckOptions, ClusterState, DocumentReport};
use kubectl_quota::{admission_config, manifest, objects, resources};

// ---------------------------------------------------------------------------------------------
// Running a check
// ---------------------------------------------------------------------------------------------

const NS: &str = "ns";

fn decode(file: &str, text: &str) -> Vec<objects::Object> {
    let docs = manifest::parse_str(file, text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    docs.iter().map(|d| objects::decode(d).unwrap_or_else(|e| panic!("{e}\n{text}"))).collect()
}

/// Checks `input` against `state`, with an optional admission configuration and node count.
fn check_with(state: &str, input: &str, admission: Option<&str>, nodes: Option<u32>) -> Vec<DocumentReport> {
    let mut cluster = ClusterState::from_objects(decode("state.yaml", state), NS);
    let limited = admission.map(|a| admission_config::parse("admission.yaml", a).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_default();
    let opts = CheckOptions { namespace: NS.into(), limited, nodes };
    check::check(&mut cluster, decode("input.yaml", input), &opts).documents
}

fn check_all(state: &str, input: &str) -> Vec<DocumentReport> {
    check_with(state, input, None, None)
}

/// The report of a single-document input.
fn only(mut reports: Vec<DocumentReport>) -> DocumentReport {
    assert_eq!(reports.len(), 1, "one document expected");
    reports.remove(0)
}

fn check_one(state: &str, input: &str) -> DocumentReport {
    only(check_all(state, input))
}

// ---------------------------------------------------------------------------------------------
// Reading a report
// ---------------------------------------------------------------------------------------------

const OK: &str = "allowed";

/// `allowed`, or the server's message; for a workload also `; pods <admitted>/<wanted>` and
/// the first refusal its pods met.
fn summary(d: &DocumentReport) -> String {
    let mut s = if d.allowed { OK.to_string() } else { d.message.clone().unwrap_or_default() };
    if let Some(wanted) = d.replicas {
        write!(s, "; pods {}/{wanted}", d.replicas_admitted.unwrap_or(-1)).unwrap();
        if let Some(m) = &d.pod_message {
            write!(s, ": {m}").unwrap();
        }
    }
    s
}

/// The charged usage of the names `keep` accepts, as the server prints lists (`k=v,...`,
/// sorted).
fn usage_where(d: &DocumentReport, keep: impl Fn(&str) -> bool) -> String {
    resources::pretty_print(&d.usage.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect())
}

fn usage(d: &DocumentReport, keys: &[&str]) -> String {
    usage_where(d, |k| keys.contains(&k))
}

/// `allowed: <usage of the names keep accepts>` (just `allowed` when none is charged), else
/// the message.
fn charged_where(d: &DocumentReport, keep: impl Fn(&str) -> bool) -> String {
    match (d.allowed, usage_where(d, keep)) {
        (true, u) if u.is_empty() => OK.into(),
        (true, u) => format!("{OK}: {u}"),
        (false, _) => summary(d),
    }
}

fn charged(d: &DocumentReport, keys: &[&str]) -> String {
    charged_where(d, |k| keys.contains(&k))
}

/// The summary of an admitted workload whose `n` pods all fit.
fn pods_fit(n: i32) -> String {
    format!("{OK}; pods {n}/{n}")
}

/// The summary of an admitted workload whose pods stop at `admitted` of `wanted`.
fn pods_stop(admitted: i32, wanted: i32, refusal: impl AsRef<str>) -> String {
    format!("{OK}; pods {admitted}/{wanted}: {}", refusal.as_ref())
}

/// The verdict a named quota gave.
fn verdict(d: &DocumentReport, quota: &str) -> Option<QuotaVerdict> {
    d.quotas.iter().find(|q| q.name == quota).map(|q| q.verdict)
}

/// The server's `exceeded quota` message for one resource.
fn exceeded(quota: &str, key: &str, requested: &str, used: &str, hard: &str) -> String {
    format!("exceeded quota: {quota}, requested: {key}={requested}, used: {key}={used}, limited: {key}={hard}")
}

/// Collects every row's mismatch, so one run shows all of them.
#[derive(Default)]
struct Table(Vec<String>);

impl Table {
    fn row(&mut self, what: &str, got: impl AsRef<str>, want: impl AsRef<str>) {
        let (got, want) = (got.as_ref(), want.as_ref());
        if got != want {
            self.0.push(format!("{what}\n      want {want:?}\n      got  {got:?}"));
        }
    }

    fn done(self) {
        assert!(self.0.is_empty(), "{} row(s) differ:\n  {}", self.0.len(), self.0.join("\n  "));
    }
}

// ---------------------------------------------------------------------------------------------
// Building state and input
// ---------------------------------------------------------------------------------------------

/// `, fields` to append to a flow map, or nothing.
fn more(fields: &str) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        format!(", {fields}")
    }
}

/// Joins YAML documents.
fn docs<S: AsRef<str>>(parts: &[S]) -> String {
    parts.iter().map(|p| p.as_ref().trim_end().to_string()).collect::<Vec<_>>().join("\n---\n") + "\n"
}

/// Cluster-scoped objects most tests share: PriorityClasses (none is the global default),
/// StorageClasses (`standard` is the default) and a RuntimeClass with overhead.
const CLUSTER: &str = "\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 10000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: cluster-services}
value: 100000
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gold}
provisioner: example.com/gold
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bronze}
provisioner: example.com/bronze
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}
provisioner: example.com/standard
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
";

/// The shared cluster objects plus `extra` documents.
fn cluster<S: AsRef<str>>(extra: &[S]) -> String {
    let mut all = vec![CLUSTER.to_string()];
    all.extend(extra.iter().map(|s| s.as_ref().to_string()));
    docs(&all)
}

fn priority_class(name: &str, value: i32, global_default: bool) -> String {
    format!("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\nglobalDefault: {global_default}\n")
}

fn storage_class(name: &str, default: bool, created: &str) -> String {
    format!(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}, creationTimestamp: '{created}', annotations: {{storageclass.kubernetes.io/is-default-class: '{default}'}}}}\nprovisioner: x\n"
    )
}

/// `key=hard/used ...` as (hard, used) flow maps.
fn hard_used(spec: &str) -> (String, String) {
    let (mut hard, mut used) = (Vec::new(), Vec::new());
    for item in spec.split_whitespace() {
        let (key, values) = item.split_once('=').unwrap_or_else(|| panic!("bad quota item {item:?}"));
        let (h, u) = match values.split_once('/') {
            Some((h, u)) => (h, Some(u)),
            None => (values, None),
        };
        hard.push(format!("'{key}': '{h}'"));
        if let Some(u) = u {
            used.push(format!("'{key}': '{u}'"));
        }
    }
    (format!("{{{}}}", hard.join(", ")), format!("{{{}}}", used.join(", ")))
}

/// A ResourceQuota the quota controller has not synced yet (no status).
fn unsynced_quota(name: &str, spec: &str, resources: &str) -> String {
    let (hard, _) = hard_used(resources);
    format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}}}\nspec: {{hard: {hard}{}}}\n", more(spec))
}

/// A ResourceQuota as the quota controller leaves it: `status.hard` = `spec.hard`, and the used
/// values given.
fn quota(name: &str, spec: &str, resources: &str) -> String {
    let (hard, used) = hard_used(resources);
    format!("{}status: {{hard: {hard}, used: {used}}}\n", unsynced_quota(name, spec, resources))
}

/// A quota whose `pods` is used up: it refuses exactly the pods it selects.
fn full_pods_quota(name: &str, spec: &str) -> String {
    quota(name, spec, "pods=1/1")
}

/// The refusal of `full_pods_quota`.
fn full_pods(name: &str) -> String {
    exceeded(name, "pods", "1", "1", "1")
}

/// `scopeSelector` with one expression.
fn sel(scope: &str, operator: &str, values: &[&str]) -> String {
    let values = if values.is_empty() { String::new() } else { format!("values: [{}]", values.join(", ")) };
    format!("scopeSelector: {{matchExpressions: [{{scopeName: {scope}, operator: {operator}{}}}]}}", more(&values))
}

fn limit_range(items: &str) -> String {
    format!("apiVersion: v1\nkind: LimitRange\nmetadata: {{name: lr}}\nspec: {{limits: [{items}]}}\n")
}

/// A pod, written as a flow-style spec so it nests in workload templates unchanged.
#[derive(Clone)]
struct PodSpec {
    name: String,
    containers: Vec<String>,
    init_containers: Vec<String>,
    extra: Vec<String>,
}

/// A pod named `name`; without `app`/`init`/`sidecar` calls it has one container `app` with no
/// resources.
fn pod(name: &str) -> PodSpec {
    PodSpec { name: name.into(), containers: vec![], init_containers: vec![], extra: vec![] }
}

fn container(name: &str, resources: &str, extra: &str) -> String {
    format!("{{name: {name}, image: x, resources: {{{resources}}}{extra}}}")
}

impl PodSpec {
    /// A regular container; `resources` is the inside of `resources:`, e.g.
    /// `requests: {cpu: 500m}, limits: {cpu: 1}`.
    fn app(mut self, name: &str, resources: &str) -> Self {
        self.containers.push(container(name, resources, ""));
        self
    }

    fn init(mut self, name: &str, resources: &str) -> Self {
        self.init_containers.push(container(name, resources, ""));
        self
    }

    /// A restartable init container (`restartPolicy: Always`).
    fn sidecar(mut self, name: &str, resources: &str) -> Self {
        self.init_containers.push(container(name, resources, ", restartPolicy: Always"));
        self
    }

    /// Another `spec` field, e.g. `activeDeadlineSeconds: 30`.
    fn with(mut self, field: &str) -> Self {
        self.extra.push(field.into());
        self
    }

    fn class(self, priority_class: &str) -> Self {
        self.with(&format!("priorityClassName: {priority_class}"))
    }

    fn spec(&self) -> String {
        let containers = if self.containers.is_empty() { vec![container("app", "", "")] } else { self.containers.clone() };
        let mut fields = vec![format!("containers: [{}]", containers.join(", "))];
        if !self.init_containers.is_empty() {
            fields.push(format!("initContainers: [{}]", self.init_containers.join(", ")));
        }
        fields.extend(self.extra.iter().cloned());
        format!("{{{}}}", fields.join(", "))
    }

    fn yaml(&self) -> String {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {}}}\nspec: {}\n", self.name, self.spec())
    }
}

/// A workload of `kind` whose pods are `template`; `spec` adds fields to the workload's spec
/// (`replicas: 3`, `parallelism: 2`, ...).
fn workload(kind: &str, name: &str, spec: &str, template: &PodSpec) -> String {
    let template = format!("template: {{metadata: {{labels: {{app: {name}}}}}, spec: {}}}{}", template.spec(), more(spec));
    let (api, body) = match kind {
        "Deployment" | "StatefulSet" | "DaemonSet" => ("apps/v1", format!("{{selector: {{matchLabels: {{app: {name}}}}}, {template}}}")),
        "Job" => ("batch/v1", format!("{{{template}}}")),
        "CronJob" => ("batch/v1", format!("{{schedule: '*/5 * * * *', jobTemplate: {{spec: {{{template}}}}}}}")),
        "ReplicationController" => ("v1", format!("{{selector: {{app: {name}}}, {template}}}")),
        other => panic!("no workload kind {other}"),
    };
    format!("apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\nspec: {body}\n")
}

/// A claim `c` for `size` of storage; `spec` adds spec fields, `beta_class` sets the
/// `volume.beta.kubernetes.io/storage-class` annotation.
fn claim(size: &str, spec: &str, beta_class: Option<&str>) -> String {
    let annotations = beta_class.map(|c| format!(", annotations: {{volume.beta.kubernetes.io/storage-class: '{c}'}}")).unwrap_or_default();
    format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c{annotations}}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}{}}}\n", more(spec))
}

/// A Service `s`.
fn service(spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {{{spec}}}\n")
}

/// Any other object: `kind` with `apiVersion`, and optional extra top-level YAML.
fn object(api_version: &str, kind: &str, name: &str, extra: &str) -> String {
    format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}}}\n{extra}")
}

/// An AdmissionConfiguration with the given `limitedResources` entries (flow maps).
fn limited(entries: &[&str]) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n    limitedResources: [{}]\n",
        entries.join(", ")
    )
}

// ---------------------------------------------------------------------------------------------
// Pod usage (§1.2, §1.3)
// ---------------------------------------------------------------------------------------------

const COMPUTE: &[&str] = &["requests.cpu", "limits.cpu", "requests.memory", "limits.memory"];

#[test]
fn sidecars_and_init_containers_follow_the_sum_and_init_phase_rules() {
    // §1.3: sum = containers + sidecars; an init container's phase = itself + the sidecars
    // started before it; a sidecar's phase = the sidecars so far; result = max(sum, phases).
    let rows = [
        ("containers are summed", pod("p").app("a", "requests: {cpu: 500m}").app("b", "requests: {cpu: 700m}"), "requests.cpu=1200m"),
        ("an init container larger than the sum wins", pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 2}"), "requests.cpu=2"),
        ("a smaller init container does not add", pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 100m}"), "requests.cpu=500m"),
        ("a sidecar adds to the sum", pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}"), "requests.cpu=800m"),
        (
            "an init container after a sidecar runs beside it",
            pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}").init("i", "requests: {cpu: 1}"),
            "requests.cpu=1300m",
        ),
        (
            "an init container before a sidecar does not see it",
            pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 1}").sidecar("s", "requests: {cpu: 300m}"),
            "requests.cpu=1",
        ),
        (
            "sidecars accumulate across init phases",
            pod("p")
                .app("a", "requests: {cpu: 100m}")
                .sidecar("s1", "requests: {cpu: 200m}")
                .sidecar("s2", "requests: {cpu: 300m}")
                .init("i", "requests: {cpu: 600m}"),
            "requests.cpu=1100m",
        ),
        (
            "a resource only an init container asks for is charged",
            pod("p").app("a", "requests: {cpu: 100m}").init("i", "requests: {memory: 1Gi}"),
            "requests.cpu=100m,requests.memory=1Gi",
        ),
        (
            "limits follow the same rule (and default the requests)",
            pod("p").app("a", "limits: {cpu: 1}").sidecar("s", "limits: {cpu: 1}").init("i", "limits: {cpu: 2}"),
            "limits.cpu=3,requests.cpu=3",
        ),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, usage(&check_one("", &p.yaml()), COMPUTE), want);
    }
    // The aggregate is what the quota is charged with (§2.2 exceeded message).
    let p = pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}").init("i", "requests: {cpu: 1}");
    t.row(
        "the quota sees the aggregate",
        summary(&check_one(&quota("q", "", "requests.cpu=1/0"), &p.yaml())),
        exceeded("q", "requests.cpu", "1300m", "0", "1"),
    );
    t.done();
}

#[test]
fn runtime_class_overhead_is_added_to_requests_and_to_existing_nonzero_limits() {
    // §0 step 2: the RuntimeClass plugin sets spec.overhead; §1.3: overhead is added to every
    // request (creating keys) and only to limits that exist and are non-zero.
    let kata = "runtimeClassName: kata";
    let rows = [
        ("no RuntimeClass, no overhead", pod("p").app("a", "requests: {cpu: 1}"), "allowed: requests.cpu=1"),
        ("overhead is added to every request", pod("p").app("a", "requests: {cpu: 1}").with(kata), "allowed: requests.cpu=1250m,requests.memory=120Mi"),
        (
            "overhead is added to an existing limit, not to a missing one",
            pod("p").app("a", "limits: {cpu: 1}").with(kata),
            "allowed: limits.cpu=1250m,requests.cpu=1250m,requests.memory=120Mi",
        ),
        (
            "a zero limit gets no overhead",
            pod("p").app("a", "requests: {cpu: '0'}, limits: {cpu: '0'}").with(kata),
            "allowed: requests.cpu=250m,requests.memory=120Mi",
        ),
        // plugin/pkg/admission/runtimeclass/admission.go prepareObjects
        ("an unknown RuntimeClass is refused", pod("p").with("runtimeClassName: gvisor"), "pod rejected: RuntimeClass \"gvisor\" not found"),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, charged(&check_one(&docs(&[CLUSTER]), &p.yaml()), COMPUTE), want);
    }
    t.done();
}

#[test]
fn pod_level_resources_replace_the_container_aggregate() {
    // §1.3: pod-level requests/limits (cpu, memory, hugepages) replace the aggregate for their
    // keys; overhead is added on top. §0: pod-level limits default missing pod-level requests
    // (when no container requests the resource, both upstream readings agree).
    let rows = [
        (
            "pod-level requests replace the sum",
            pod("p").app("a", "requests: {cpu: 500m}").app("b", "requests: {cpu: 700m}").with("resources: {requests: {cpu: 2}}"),
            "requests.cpu=2",
        ),
        (
            "only the keys set at pod level are replaced",
            pod("p").app("a", "requests: {cpu: 100m, memory: 1Gi}").with("resources: {requests: {cpu: 2}}"),
            "requests.cpu=2,requests.memory=1Gi",
        ),
        (
            "pod-level limits replace the limits",
            pod("p").app("a", "limits: {cpu: 1}").with("resources: {requests: {cpu: 1}, limits: {cpu: 3}}"),
            "limits.cpu=3,requests.cpu=1",
        ),
        (
            "pod-level limits default pod-level requests",
            pod("p").with("resources: {limits: {cpu: 2, memory: 1Gi}}"),
            "limits.cpu=2,limits.memory=1Gi,requests.cpu=2,requests.memory=1Gi",
        ),
        (
            "overhead is added on top of pod-level requests",
            pod("p").with("resources: {requests: {cpu: 2}}").with("runtimeClassName: kata"),
            "requests.cpu=2250m,requests.memory=120Mi",
        ),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, usage(&check_one(&docs(&[CLUSTER]), &p.yaml()), COMPUTE), want);
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// "must specify" (§2.1)
// ---------------------------------------------------------------------------------------------

#[test]
fn must_specify_requires_cpu_and_memory_keys_on_every_container() {
    let lr_default = limit_range("{type: Container, default: {cpu: 500m}}");
    let lr_request_only = limit_range("{type: Container, defaultRequest: {cpu: 100m}}");
    let must = |what: &str| format!("failed quota: q: must specify {what}");
    let rows = [
        ("cpu is satisfied by a limit (API defaulting copies it)", "", "", "cpu=10/0", pod("p").app("app", "limits: {cpu: 1}"), OK.to_string()),
        ("requests.cpu is satisfied by a request", "", "", "requests.cpu=10/0", pod("p").app("app", "requests: {cpu: 1}"), OK.into()),
        ("requests.cpu is satisfied by a limit too", "", "", "requests.cpu=10/0", pod("p").app("app", "limits: {cpu: 1}"), OK.into()),
        ("cpu needs a request or a limit", "", "", "cpu=10/0", pod("p").app("app", "requests: {memory: 1Gi}"), must("cpu for: app")),
        ("an explicit zero request counts as specified", "", "", "requests.cpu=10/0", pod("p").app("app", "requests: {cpu: '0'}"), OK.into()),
        ("limits.cpu needs a limit", "", "", "limits.cpu=10/0", pod("p").app("app", "requests: {cpu: 1}"), must("limits.cpu for: app")),
        ("resources are listed sorted", "", "", "requests.memory=10Gi/0 memory=10Gi/0", pod("p"), must("memory for: app; requests.memory for: app")),
        (
            "ephemeral-storage, hugepages and extended resources are never required",
            "",
            "",
            "requests.ephemeral-storage=10Gi/0 limits.ephemeral-storage=10Gi/0 hugepages-2Mi=1Gi/0 requests.nvidia.com/gpu=4/0",
            pod("p"),
            OK.into(),
        ),
        ("a pods-only quota requires nothing", "", "", "pods=10/0", pod("p"), OK.into()),
        (
            "init containers are checked",
            "",
            "",
            "limits.cpu=10/0",
            pod("p").app("app", "limits: {cpu: 1}").init("init-db", ""),
            must("limits.cpu for: init-db"),
        ),
        (
            "sidecars are checked, names sorted",
            "",
            "",
            "limits.cpu=10/0",
            pod("p").app("web", "").app("api", "limits: {cpu: 1}").sidecar("log", ""),
            must("limits.cpu for: log,web"),
        ),
        (
            "each resource names its own containers",
            "",
            "",
            "limits.cpu=10/0 requests.memory=10Gi/0",
            pod("p").app("app", "limits: {cpu: 1}").app("web", "requests: {memory: 1Gi}").init("init", ""),
            must("limits.cpu for: init,web; requests.memory for: app,init"),
        ),
        ("a LimitRange default limit satisfies it", lr_default.as_str(), "", "limits.cpu=10/0", pod("p"), OK.into()),
        (
            "a LimitRange default request does not give a limit",
            lr_request_only.as_str(),
            "",
            "limits.cpu=10/0 requests.cpu=10/0",
            pod("p"),
            must("limits.cpu for: app"),
        ),
        ("pod-level resources turn the check off", "", "", "limits.cpu=10/0 limits.memory=10Gi/0", pod("p").with("resources: {requests: {cpu: 1}}"), OK.into()),
        ("only quotas that select the pod require anything", "", "scopes: [Terminating]", "limits.cpu=10/0", pod("p"), OK.into()),
        // §5 step c: the constraint is checked before the usage stats of the same quota.
        ("must specify comes before status unknown", "", "", "limits.cpu=10", pod("p"), must("limits.cpu for: app")),
    ];
    let mut t = Table::default();
    for (what, extra_state, scopes, hard, p, want) in rows {
        let state = docs(&[quota("q", scopes, hard), extra_state.to_string()]);
        t.row(what, summary(&check_one(&state, &p.yaml())), want);
    }
    // §2.3: a 403 naming the pod.
    let d = check_one(&quota("q", "", "limits.cpu=10/0"), &pod("p").yaml());
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: failed quota: q: must specify limits.cpu for: app");
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Scopes (§3)
// ---------------------------------------------------------------------------------------------

/// Rows of (what, extra state, quota spec, pod, selected): a selected pod meets the full quota.
fn scope_rows(rows: Vec<(&str, String, String, PodSpec, bool)>) {
    let mut t = Table::default();
    for (what, extra_state, spec, p, selected) in rows {
        let state = cluster(&[full_pods_quota("q", &spec), extra_state]);
        let want = if selected { full_pods("q") } else { OK.into() };
        t.row(what, summary(&check_one(&state, &p.yaml())), want);
    }
    t.done();
}

#[test]
fn terminating_and_best_effort_scopes() {
    // §3.2: Terminating = activeDeadlineSeconds set; §3.3: BestEffort = no cpu/memory request or
    // limit above zero on any container, init containers and sidecars included.
    let s = |scope: &str| format!("scopes: [{scope}]");
    let lr = limit_range("{type: Container, default: {cpu: 500m}}");
    let rows = vec![
        ("Terminating selects a pod with a deadline", String::new(), s("Terminating"), pod("p").with("activeDeadlineSeconds: 30"), true),
        ("Terminating skips a pod without one", String::new(), s("Terminating"), pod("p"), false),
        ("NotTerminating selects a pod without a deadline", String::new(), s("NotTerminating"), pod("p"), true),
        ("NotTerminating skips a pod with one", String::new(), s("NotTerminating"), pod("p").with("activeDeadlineSeconds: 30"), false),
        ("BestEffort selects a pod without resources", String::new(), s("BestEffort"), pod("p"), true),
        ("BestEffort skips a pod with a cpu request", String::new(), s("BestEffort"), pod("p").app("a", "requests: {cpu: 100m}"), false),
        ("an init container's request makes the pod Burstable", String::new(), s("BestEffort"), pod("p").init("i", "requests: {cpu: 100m}"), false),
        ("a sidecar's limit makes the pod Burstable", String::new(), s("BestEffort"), pod("p").sidecar("s", "limits: {memory: 64Mi}"), false),
        (
            "ephemeral-storage and extended resources leave it BestEffort",
            String::new(),
            s("BestEffort"),
            pod("p").app("a", "requests: {ephemeral-storage: 1Gi}, limits: {nvidia.com/gpu: 1}"),
            true,
        ),
        ("a zero request leaves it BestEffort", String::new(), s("BestEffort"), pod("p").app("a", "requests: {cpu: '0'}"), true),
        ("a LimitRange default makes it Burstable", lr.clone(), s("BestEffort"), pod("p"), false),
        ("pod-level resources decide the QoS class", String::new(), s("BestEffort"), pod("p").with("resources: {requests: {cpu: 1}}"), false),
        ("NotBestEffort selects a pod whose init container has a limit", String::new(), s("NotBestEffort"), pod("p").init("i", "limits: {memory: 64Mi}"), true),
        ("NotBestEffort skips a pod without resources", String::new(), s("NotBestEffort"), pod("p"), false),
    ];
    scope_rows(rows);
}

#[test]
fn priority_class_scope_selector_operators() {
    // §3.2: label-selector semantics on {PriorityClass: name}, an empty name being no label;
    // the Priority plugin fills an empty name from the global default class first (§0).
    let default = priority_class("standard", 500, true);
    let p = |class: &str| if class.is_empty() { pod("p") } else { pod("p").class(class) };
    let rows = vec![
        ("In selects a listed class", String::new(), sel("PriorityClass", "In", &["high"]), p("high"), true),
        ("In skips another class", String::new(), sel("PriorityClass", "In", &["high"]), p("low"), false),
        ("In skips an empty class", String::new(), sel("PriorityClass", "In", &["high"]), p(""), false),
        ("NotIn selects an empty class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p(""), true),
        ("NotIn selects another class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p("low"), true),
        ("NotIn skips a listed class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p("high"), false),
        ("Exists skips an empty class", String::new(), sel("PriorityClass", "Exists", &[]), p(""), false),
        ("Exists selects any class", String::new(), sel("PriorityClass", "Exists", &[]), p("low"), true),
        ("DoesNotExist selects an empty class", String::new(), sel("PriorityClass", "DoesNotExist", &[]), p(""), true),
        ("DoesNotExist skips a class", String::new(), sel("PriorityClass", "DoesNotExist", &[]), p("low"), false),
        ("the global default fills an empty class: DoesNotExist", default.clone(), sel("PriorityClass", "DoesNotExist", &[]), p(""), false),
        ("the global default fills an empty class: In", default.clone(), sel("PriorityClass", "In", &["standard"]), p(""), true),
        ("the global default fills an empty class: NotIn", default.clone(), sel("PriorityClass", "NotIn", &["standard"]), p(""), false),
        ("the global default fills an empty class: Exists", default.clone(), sel("PriorityClass", "Exists", &[]), p(""), true),
        ("the global default does not replace a class", default, sel("PriorityClass", "In", &["standard"]), p("low"), false),
    ];
    scope_rows(rows);
}

#[test]
fn cross_namespace_pod_affinity_scope() {
    // §3.2: any pod (anti-)affinity term, required or preferred, with non-empty `namespaces`
    // or a non-nil `namespaceSelector` (even `{}`).
    let scope = "scopes: [CrossNamespacePodAffinity]".to_string();
    let term = |extra: &str| format!("{{topologyKey: zone, labelSelector: {{matchLabels: {{app: db}}}}{extra}}}");
    let affinity = |kind: &str, list: &str, term: String| pod("p").with(&format!("affinity: {{{kind}: {{{list}: [{term}]}}}}"));
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    let rows = vec![
        ("a required affinity term naming namespaces", affinity("podAffinity", required, term(", namespaces: [other]")), true),
        (
            "a preferred anti-affinity term with namespaceSelector {}",
            affinity("podAntiAffinity", preferred, format!("{{weight: 1, podAffinityTerm: {}}}", term(", namespaceSelector: {}"))),
            true,
        ),
        ("a term in the pod's own namespace", affinity("podAffinity", required, term("")), false),
        ("an empty namespaces list", affinity("podAntiAffinity", required, term(", namespaces: []")), false),
        ("no affinity", pod("p"), false),
    ];
    scope_rows(rows.into_iter().map(|(w, p, s)| (w, String::new(), scope.clone(), p, s)).collect());
}

#[test]
fn volume_attributes_class_scope_selects_claims() {
    // §3.4: label-selector semantics on the claim's VolumeAttributesClass name; §3.1: no other
    // scope ever selects a claim.
    let vac = |name: &str| format!("volumeAttributesClassName: {name}");
    let rows = [
        ("In selects a listed class", sel("VolumeAttributesClass", "In", &["gold"]), vac("gold"), true),
        ("In skips another class", sel("VolumeAttributesClass", "In", &["gold"]), vac("silver"), false),
        ("In skips a claim without a class", sel("VolumeAttributesClass", "In", &["gold"]), String::new(), false),
        ("NotIn selects a claim without a class", sel("VolumeAttributesClass", "NotIn", &["gold"]), String::new(), true),
        ("DoesNotExist selects a claim without a class", sel("VolumeAttributesClass", "DoesNotExist", &[]), String::new(), true),
        ("Exists skips a claim without a class", sel("VolumeAttributesClass", "Exists", &[]), String::new(), false),
        ("Exists selects a claim with a class", sel("VolumeAttributesClass", "Exists", &[]), vac("gold"), true),
        ("a PriorityClass scope never selects a claim", sel("PriorityClass", "Exists", &[]), String::new(), false),
        ("a pod scope never selects a claim", "scopes: [NotBestEffort]".into(), String::new(), false),
    ];
    let mut t = Table::default();
    for (what, spec, claim_spec, selected) in rows {
        let state = cluster(&[quota("q", &spec, "persistentvolumeclaims=1/1")]);
        let want = if selected { exceeded("q", "persistentvolumeclaims", "1", "1", "1") } else { OK.into() };
        t.row(what, summary(&check_one(&state, &claim("1Gi", &claim_spec, None))), want);
    }
    t.done();
}

#[test]
fn scopes_and_scope_selector_are_intersected() {
    // §3.1: every scope and every selector expression must match.
    let both = format!("scopes: [NotTerminating], {}", sel("PriorityClass", "In", &["high"]));
    let two = "scopes: [BestEffort, NotTerminating]".to_string();
    let rows = vec![
        ("scope and selector both match", String::new(), both.clone(), pod("p").class("high"), true),
        ("the scope fails", String::new(), both.clone(), pod("p").class("high").with("activeDeadlineSeconds: 30"), false),
        ("the selector fails", String::new(), both, pod("p").class("low"), false),
        ("two scopes both match", String::new(), two.clone(), pod("p"), true),
        ("the second scope fails", String::new(), two.clone(), pod("p").with("activeDeadlineSeconds: 30"), false),
        ("the first scope fails", String::new(), two, pod("p").app("a", "requests: {cpu: 1}"), false),
    ];
    scope_rows(rows);
}

#[test]
fn scoped_quotas_never_select_services_configmaps_or_secrets() {
    // §3.1: evaluators without scope support never match a quota with any scope or selector.
    let hard = "services=1/1 configmaps=1/1 count/secrets=1/1";
    let objects = [
        ("service", service("ports: [{port: 80}]"), "services"),
        ("configmap", object("v1", "ConfigMap", "c", ""), "configmaps"),
        ("secret", object("v1", "Secret", "s", ""), "count/secrets"),
    ];
    let specs = [("no scope", String::new()), ("a scope", "scopes: [NotBestEffort]".to_string()), ("a selector", sel("PriorityClass", "Exists", &[]))];
    let mut t = Table::default();
    for (kind, yaml, key) in &objects {
        for (scoped, spec) in &specs {
            let want = if spec.is_empty() { exceeded("q", key, "1", "1", "1") } else { OK.into() };
            t.row(&format!("{kind} under a quota with {scoped}"), summary(&check_one(&quota("q", spec, hard), yaml)), want);
        }
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Quota status (§5)
// ---------------------------------------------------------------------------------------------

#[test]
fn quota_status_decides_enforcement() {
    // §5 "Status.Hard vs Spec.Hard": admission reads status only; a quota without status
    // matches nothing; a restricted hard key without a used value is `status unknown`, listing
    // every restricted resource of the quota (§2.2, prettyPrintResourceNames).
    let rows = [
        ("a quota without status lets everything through", unsynced_quota("q", "", "pods=0"), pod("p"), OK.to_string(), QuotaVerdict::NotEnforced),
        (
            "a hard key without used",
            quota("q", "", "pods=10/0 requests.cpu=4"),
            pod("p").app("a", "requests: {cpu: 1}"),
            "status unknown for quota: q, resources: pods,requests.cpu".into(),
            QuotaVerdict::StatusUnknown,
        ),
        (
            "status unknown whatever the pod requests",
            quota("q", "", "requests.ephemeral-storage=10Gi"),
            pod("p"),
            "status unknown for quota: q, resources: requests.ephemeral-storage".into(),
            QuotaVerdict::StatusUnknown,
        ),
        ("a missing used value for another kind does not matter", quota("q", "", "pods=10/0 configmaps=5"), pod("p"), OK.into(), QuotaVerdict::Fits),
        ("a scoped quota that does not select the pod", quota("q", "scopes: [Terminating]", "pods=10"), pod("p"), OK.into(), QuotaVerdict::NotApplicable),
    ];
    let mut t = Table::default();
    for (what, state, p, want, want_verdict) in rows {
        let d = check_one(&state, &p.yaml());
        t.row(what, format!("{} [{:?}]", summary(&d), verdict(&d, "q")), format!("{want} [{:?}]", Some(want_verdict)));
    }
    t.done();
}

#[test]
fn zero_usage_is_allowed_without_charge() {
    // §5 step f/h: zero entries are dropped; a quota whose keys are all zero for the object is
    // not exceeded and not charged.
    let cpu0 = |name: &str| pod(name).app("a", "requests: {cpu: '0'}").yaml();
    let rows = [
        (
            "a full quota lets zero requests through, uncharged",
            quota("q", "", "requests.cpu=1/1"),
            docs(&[cpu0("a"), cpu0("b"), pod("c").app("a", "requests: {cpu: 1m}").yaml()]),
            vec![OK.to_string(), OK.into(), exceeded("q", "requests.cpu", "1m", "1", "1")],
        ),
        ("a zero hard value admits zero usage", quota("q", "", "requests.cpu=0/0"), cpu0("a"), vec![OK.into()]),
        (
            "a ClusterIP service under a full node-port quota",
            quota("q", "", "services.nodeports=0/0 services.loadbalancers=0/0"),
            service("ports: [{port: 80}]"),
            vec![OK.into()],
        ),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input).iter().map(summary).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Object counts (§4, §4.3)
// ---------------------------------------------------------------------------------------------

#[test]
fn objects_are_counted_as_count_resource_group() {
    // §4: count/<resource>.<group> (count/<resource> for core); the legacy names configmaps,
    // secrets, resourcequotas, replicationcontrollers are charged with their count/ twins.
    let rc = workload("ReplicationController", "rc", "replicas: 1", &pod("p"));
    let rows = [
        ("a Deployment", "count/deployments.apps", workload("Deployment", "d", "replicas: 1", &pod("p"))),
        ("a Job", "count/jobs.batch", workload("Job", "j", "", &pod("p").with("restartPolicy: Never"))),
        ("a CronJob", "count/cronjobs.batch", workload("CronJob", "cj", "", &pod("p").with("restartPolicy: Never"))),
        ("an Ingress", "count/ingresses.networking.k8s.io", object("networking.k8s.io/v1", "Ingress", "i", "spec: {}\n")),
        ("a ServiceAccount", "count/serviceaccounts", object("v1", "ServiceAccount", "sa", "")),
        ("a custom resource (plural guessed)", "count/widgets.example.com", object("example.com/v1", "Widget", "w", "spec: {}\n")),
        ("a custom resource ending in y", "count/policies.example.com", object("example.com/v1", "Policy", "pol", "spec: {}\n")),
        ("a ConfigMap, legacy name", "configmaps", object("v1", "ConfigMap", "c", "")),
        ("a ConfigMap, count name", "count/configmaps", object("v1", "ConfigMap", "c", "")),
        ("a Secret, legacy name", "secrets", object("v1", "Secret", "s", "")),
        ("a Secret, count name", "count/secrets", object("v1", "Secret", "s", "")),
        ("a ResourceQuota, legacy name", "resourcequotas", unsynced_quota("new", "", "pods=1")),
        ("a ResourceQuota, count name", "count/resourcequotas", unsynced_quota("new", "", "pods=1")),
        ("a ReplicationController, legacy name", "replicationcontrollers", rc.clone()),
        ("a ReplicationController, count name", "count/replicationcontrollers", rc),
    ];
    let mut t = Table::default();
    for (what, key, yaml) in &rows {
        t.row(what, summary(&check_one(&quota("q", "", &format!("{key}=1/1")), yaml)), exceeded("q", key, "1", "1", "1"));
    }
    // Both names limited: only the one that is exceeded is named.
    t.row(
        "legacy and count names in one quota",
        summary(&check_one(&quota("q", "", "configmaps=5/0 count/configmaps=1/1"), &object("v1", "ConfigMap", "c", ""))),
        exceeded("q", "count/configmaps", "1", "1", "1"),
    );
    // Both are charged (usage), not just the one the quota names.
    t.row(
        "a Secret is charged under both names",
        usage(&check_one("", &object("v1", "Secret", "s", "")), &["secrets", "count/secrets"]),
        "count/secrets=1,secrets=1",
    );
    // The guess is said out loud.
    let d = check_one("", &object("example.com/v1", "Widget", "w", "spec: {}\n"));
    let noted = d.notes.iter().any(|n| n.contains("count/widgets.example.com") && n.contains("guess"));
    t.row("the guessed plural is noted", noted.to_string(), "true");
    t.done();
}

#[test]
fn cluster_scoped_objects_and_events_are_not_checked() {
    // §5: Validate returns early for non-namespaced requests; §4: events (core and
    // events.k8s.io) are ignored resources. No quota is even consulted.
    let state = quota("q", "", "count/events=0/0 count/events.events.k8s.io=0/0 count/namespaces=0/0 count/priorityclasses.scheduling.k8s.io=0/0");
    let rows = [
        ("a Namespace", object("v1", "Namespace", "team", "")),
        ("a PriorityClass", priority_class("urgent", 5, false)),
        ("a StorageClass", storage_class("fast", false, "2024-01-01T00:00:00Z")),
        ("a core Event", object("v1", "Event", "e", "involvedObject: {kind: Pod, name: p}\n")),
        (
            "an events.k8s.io Event",
            object(
                "events.k8s.io/v1",
                "Event",
                "e",
                "eventTime: '2024-01-01T00:00:00.000000Z'\nreportingController: x\nreportingInstance: y\naction: a\nreason: r\n",
            ),
        ),
    ];
    let mut t = Table::default();
    for (what, yaml) in &rows {
        let d = check_one(&state, yaml);
        t.row(what, format!("{} ({} quotas consulted)", summary(&d), d.quotas.len()), "allowed (0 quotas consulted)");
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Claims and services (§4.1, §4.2)
// ---------------------------------------------------------------------------------------------

#[test]
fn claims_storage_class_and_storage_rounding() {
    // §4.2: class = beta annotation if present (even empty), else storageClassName; the default
    // class is set only when neither is there (explicit "" stays empty); storage rounded up to
    // whole bytes; per-class names.
    let with_class = |class: &str, size: &str| {
        let mut charged = [
            format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims=1"),
            format!("{class}.storageclass.storage.k8s.io/requests.storage={size}"),
            format!("requests.storage={size}"),
        ];
        charged.sort();
        format!("{OK}: {}", charged.join(","))
    };
    let no_class = |size: &str| format!("{OK}: requests.storage={size}");
    let two_defaults = docs(&[storage_class("old", true, "2020-01-01T00:00:00Z"), storage_class("new", true, "2024-01-01T00:00:00Z")]);
    let no_default = storage_class("gold", false, "2020-01-01T00:00:00Z");
    let shared = docs(&[CLUSTER]);
    let rows = [
        ("no class at all gets the default class", shared.clone(), claim("1Gi", "", None), with_class("standard", "1Gi")),
        ("an explicit empty class stays empty", shared.clone(), claim("1Gi", "storageClassName: ''", None), no_class("1Gi")),
        ("an explicit class", shared.clone(), claim("1Gi", "storageClassName: gold", None), with_class("gold", "1Gi")),
        ("the beta annotation names the class", shared.clone(), claim("1Gi", "", Some("gold")), with_class("gold", "1Gi")),
        ("the beta annotation wins over storageClassName", shared.clone(), claim("1Gi", "storageClassName: bronze", Some("gold")), with_class("gold", "1Gi")),
        ("an empty beta annotation is a class: no default", shared.clone(), claim("1Gi", "", Some("")), no_class("1Gi")),
        ("storage is rounded up to whole bytes", shared.clone(), claim("1500m", "storageClassName: ''", None), no_class("2")),
        ("half a byte is one byte", shared.clone(), claim("500m", "storageClassName: ''", None), no_class("1")),
        ("no default class in the cluster", no_default, claim("1Gi", "", None), no_class("1Gi")),
        ("the newest default class wins", two_defaults, claim("1Gi", "", None), with_class("new", "1Gi")),
        (
            "a per-class quota",
            cluster(&[quota("q", "", "gold.storageclass.storage.k8s.io/requests.storage=10Gi/8Gi requests.storage=100Gi/0")]),
            claim("3Gi", "storageClassName: gold", None),
            exceeded("q", "gold.storageclass.storage.k8s.io/requests.storage", "3Gi", "8Gi", "10Gi"),
        ),
        (
            "the default class is charged to its per-class names",
            cluster(&[quota("q", "", "standard.storageclass.storage.k8s.io/persistentvolumeclaims=0/0")]),
            claim("1Gi", "", None),
            exceeded("q", "standard.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "0", "0"),
        ),
    ];
    let mut t = Table::default();
    for (what, state, yaml, want) in rows {
        // The storage names: requests.storage and the per-class ones, not the counts.
        t.row(what, charged_where(&check_one(&state, &yaml), |k| k.contains("storage")), want);
    }
    t.done();
}

#[test]
fn services_node_ports_and_load_balancers() {
    // §4.1: NodePort charges one node port per port; LoadBalancer one load balancer and a node
    // port per port, or with allocateLoadBalancerNodePorts false only the explicit nodePorts.
    let keys = &["services", "services.nodeports", "services.loadbalancers"];
    let two_ports = "ports: [{port: 80}, {port: 443}]";
    let rows = [
        ("ClusterIP", String::new(), service(two_ports), "allowed: services=1"),
        ("ExternalName", String::new(), service("type: ExternalName, externalName: db.example.com"), "allowed: services=1"),
        ("NodePort", String::new(), service(&format!("type: NodePort, {two_ports}")), "allowed: services=1,services.nodeports=2"),
        (
            "LoadBalancer",
            String::new(),
            service(&format!("type: LoadBalancer, {two_ports}")),
            "allowed: services=1,services.loadbalancers=1,services.nodeports=2",
        ),
        (
            "LoadBalancer without node port allocation, one explicit",
            String::new(),
            service("type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{port: 80, nodePort: 30080}, {port: 443}]"),
            "allowed: services=1,services.loadbalancers=1,services.nodeports=1",
        ),
        (
            "LoadBalancer without node port allocation, none explicit",
            String::new(),
            service(&format!("type: LoadBalancer, allocateLoadBalancerNodePorts: false, {two_ports}")),
            "allowed: services=1,services.loadbalancers=1",
        ),
    ];
    let mut t = Table::default();
    for (what, state, yaml, want) in &rows {
        t.row(what, charged(&check_one(state, yaml), keys), want);
    }
    let quota_rows = [
        (
            "node ports over the quota",
            "services.nodeports=2/1",
            service(&format!("type: NodePort, {two_ports}")),
            exceeded("q", "services.nodeports", "2", "1", "2"),
        ),
        (
            "a load balancer over the quota",
            "services.loadbalancers=0/0",
            service(&format!("type: LoadBalancer, {two_ports}")),
            exceeded("q", "services.loadbalancers", "1", "0", "0"),
        ),
        (
            "a load balancer without node ports fits a full node-port quota",
            "services.nodeports=1/1",
            service(&format!("type: LoadBalancer, allocateLoadBalancerNodePorts: false, {two_ports}")),
            OK.into(),
        ),
    ];
    for (what, hard, yaml, want) in quota_rows {
        t.row(what, summary(&check_one(&quota("q", "", hard), &yaml)), want);
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// limitedResources (§2.2, §3.2, §5 steps a, b, g)
// ---------------------------------------------------------------------------------------------

#[test]
fn limited_resources_match_contains() {
    // §5 step b/g: consumed names (> 0) containing a matchContains string must be among the
    // resources of a quota that applies; else `insufficient quota to consume: a,b` (sorted).
    let gpu_limited = limited(&["{resource: pods, matchContains: [nvidia.com/gpu]}"]);
    let gpu_pod = pod("p").app("a", "limits: {nvidia.com/gpu: 1}");
    let gold = claim("1Gi", "storageClassName: gold", None);
    let gold_limited = limited(&["{resource: persistentvolumeclaims, matchContains: [gold.storageclass.storage.k8s.io/requests.storage]}"]);
    let consume = |names: &str| format!("insufficient quota to consume: {names}");
    let rows = [
        ("an uncovered GPU", gpu_limited.clone(), String::new(), gpu_pod.yaml(), consume("requests.nvidia.com/gpu")),
        ("a quota covers it", gpu_limited.clone(), quota("q", "", "requests.nvidia.com/gpu=4/0"), gpu_pod.yaml(), OK.into()),
        ("a pod that does not consume it", gpu_limited.clone(), String::new(), pod("p").yaml(), OK.into()),
        (
            "a covering quota that does not select the pod",
            gpu_limited.clone(),
            quota("q", &sel("PriorityClass", "In", &["high"]), "requests.nvidia.com/gpu=4/0"),
            gpu_pod.yaml(),
            consume("requests.nvidia.com/gpu"),
        ),
        (
            "a covering quota not synced yet",
            gpu_limited.clone(),
            unsynced_quota("q", "", "requests.nvidia.com/gpu=4"),
            gpu_pod.yaml(),
            consume("requests.nvidia.com/gpu"),
        ),
        (
            "the bare name is limited too: a quota on requests.cpu does not cover cpu",
            limited(&["{resource: pods, matchContains: [cpu]}"]),
            quota("q", "", "requests.cpu=4/0"),
            pod("p").app("a", "requests: {cpu: 1}").yaml(),
            consume("cpu"),
        ),
        (
            "every matching name, sorted",
            limited(&["{resource: pods, matchContains: [cpu]}"]),
            String::new(),
            pod("p").app("a", "limits: {cpu: 1}").yaml(),
            consume("cpu,limits.cpu,requests.cpu"),
        ),
        ("a storage class on claims", gold_limited.clone(), String::new(), gold.clone(), consume("gold.storageclass.storage.k8s.io/requests.storage")),
        ("another storage class", gold_limited, String::new(), claim("1Gi", "storageClassName: bronze", None), OK.into()),
        (
            "a substring matches several names",
            limited(&["{resource: persistentvolumeclaims, matchContains: [storage]}"]),
            String::new(),
            gold.clone(),
            consume("gold.storageclass.storage.k8s.io/persistentvolumeclaims,gold.storageclass.storage.k8s.io/requests.storage,requests.storage"),
        ),
        (
            "a quota covers some of them",
            limited(&["{resource: persistentvolumeclaims, matchContains: [storage]}"]),
            quota("q", "", "requests.storage=100Gi/0"),
            gold,
            consume("gold.storageclass.storage.k8s.io/persistentvolumeclaims,gold.storageclass.storage.k8s.io/requests.storage"),
        ),
        (
            "an entry for another resource",
            limited(&["{resource: persistentvolumeclaims, matchContains: [nvidia.com/gpu]}"]),
            String::new(),
            gpu_pod.yaml(),
            OK.into(),
        ),
        (
            "an entry for another API group",
            limited(&["{apiGroup: apps, resource: pods, matchContains: [nvidia.com/gpu]}"]),
            String::new(),
            gpu_pod.yaml(),
            OK.into(),
        ),
    ];
    let mut t = Table::default();
    for (what, admission, state, yaml, want) in &rows {
        let d = only(check_with(&cluster(&[state]), yaml, Some(admission), None));
        t.row(what, summary(&d), want);
    }
    // A 403 naming the pod.
    let d = only(check_with(&docs(&[CLUSTER]), &gpu_pod.yaml(), Some(&gpu_limited), None));
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: insufficient quota to consume: requests.nvidia.com/gpu");
    t.done();
}

#[test]
fn limited_resources_match_scopes() {
    // §3.2 / §5 step a, g: an object matching a limited scope needs some quota with a selector
    // of the same scope NAME that the object satisfies (operator and values ignored, the
    // quota's status and resources too); else `insufficient quota to match these scopes: %v`
    // (Go format), a plain error. The limited scopes of EVERY entry apply, whatever its
    // resource (controller.go getMatchedLimitedScopes); a claim never matches PriorityClass.
    let critical = limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]);
    let refused = "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]".to_string();
    let cs = pod("p").class("cluster-services").yaml();
    let rows = [
        ("no quota covers the scope", critical.clone(), String::new(), cs.clone(), refused.clone()),
        (
            "a quota with the same selector",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "pods=10/0"),
            cs.clone(),
            OK.into(),
        ),
        ("another class", critical.clone(), String::new(), pod("p").class("high").yaml(), OK.into()),
        ("no class", critical.clone(), String::new(), pod("p").yaml(), OK.into()),
        ("covered by scope name only", critical.clone(), quota("q", &sel("PriorityClass", "NotIn", &["low"]), "pods=10/0"), cs.clone(), OK.into()),
        (
            "a quota whose selector the pod fails",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["high"]), "pods=10/0"),
            cs.clone(),
            refused.clone(),
        ),
        (
            "covered by a quota limiting nothing pods use",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "count/configmaps=10/0"),
            cs.clone(),
            OK.into(),
        ),
        (
            "covered by a quota not synced yet",
            critical.clone(),
            unsynced_quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "pods=10"),
            cs.clone(),
            OK.into(),
        ),
        (
            "an entry for claims limits pods too",
            limited(&["{resource: persistentvolumeclaims, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]),
            String::new(),
            cs.clone(),
            refused.clone(),
        ),
        (
            "a claim never matches a PriorityClass scope",
            limited(&["{resource: persistentvolumeclaims, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]),
            String::new(),
            claim("1Gi", "", None),
            OK.into(),
        ),
        (
            "several values print space-separated",
            limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services, high]}]}"]),
            String::new(),
            pod("p").class("high").yaml(),
            "insufficient quota to match these scopes: [{PriorityClass In [cluster-services high]}]".into(),
        ),
        (
            "Exists prints empty values",
            limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: Exists}]}"]),
            String::new(),
            pod("p").class("low").yaml(),
            "insufficient quota to match these scopes: [{PriorityClass Exists []}]".into(),
        ),
    ];
    let mut t = Table::default();
    for (what, admission, state, yaml, want) in &rows {
        let d = only(check_with(&cluster(&[state]), yaml, Some(admission), None));
        t.row(what, summary(&d), want);
    }
    // A plain error: the server returns the bare message (§2.2).
    let d = only(check_with(&docs(&[CLUSTER]), &cs, Some(&critical), None));
    t.row("not a 403", d.server_error.unwrap_or_default(), refused);
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Workloads, replayed as their controllers create them
// ---------------------------------------------------------------------------------------------

/// The summary of one workload checked against the shared cluster plus `state`.
fn workload_summary(state: &str, yaml: &str, nodes: Option<u32>) -> String {
    summary(&only(check_with(&cluster(&[state]), yaml, None, nodes)))
}

/// Rows of (what, state, workload yaml, expected summary).
fn workload_rows(rows: Vec<(&str, String, String, String)>) {
    let mut t = Table::default();
    for (what, state, yaml, want) in rows {
        t.row(what, workload_summary(&state, &yaml, None), want);
    }
    t.done();
}

#[test]
fn deployment_replicas_fit_partly() {
    // Pods are created one at a time, each charged before the next (§5 step h).
    let d = |spec: &str, p: &PodSpec| workload("Deployment", "web", spec, p);
    let cpu = pod("p").app("a", "requests: {cpu: 800m}");
    workload_rows(vec![
        ("two of four fit", quota("q", "", "pods=5/3"), d("replicas: 4", &pod("p")), pods_stop(2, 4, exceeded("q", "pods", "1", "5", "5"))),
        ("all fit", quota("q", "", "pods=5/3"), d("replicas: 2", &pod("p")), pods_fit(2)),
        ("replicas default to 1", quota("q", "", "pods=5/3"), d("", &pod("p")), pods_fit(1)),
        ("zero replicas", quota("q", "", "pods=5/3"), d("replicas: 0", &pod("p")), pods_fit(0)),
        ("cpu runs out", quota("q", "", "requests.cpu=2/0"), d("replicas: 3", &cpu), pods_stop(2, 3, exceeded("q", "requests.cpu", "800m", "1600m", "2"))),
    ]);
}

#[test]
fn replicaset_count_quota_blocks_a_deployments_pods() {
    // The Deployment controller creates a ReplicaSet first (count/replicasets.apps, §4.3); if
    // that is refused no pod is created, though the Deployment itself is admitted.
    let d = workload("Deployment", "web", "replicas: 3", &pod("p"));
    workload_rows(vec![
        (
            "the ReplicaSet is refused",
            quota("q", "", "count/replicasets.apps=1/1"),
            d.clone(),
            pods_stop(0, 3, exceeded("q", "count/replicasets.apps", "1", "1", "1")),
        ),
        (
            "the ReplicaSet fits, the pods partly",
            quota("q", "", "count/replicasets.apps=5/0 pods=2/0"),
            d,
            pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2")),
        ),
    ]);
}

#[test]
fn job_pods_follow_parallelism_and_completions() {
    // The Job controller starts min(parallelism, completions) pods, none while suspended.
    let j = |spec: &str| workload("Job", "job", spec, &pod("p").with("restartPolicy: Never"));
    let room = quota("q", "", "pods=10/0");
    workload_rows(vec![
        ("parallelism defaults to 1", room.clone(), j(""), pods_fit(1)),
        ("parallelism", room.clone(), j("parallelism: 3"), pods_fit(3)),
        ("completions cap parallelism", room.clone(), j("parallelism: 5, completions: 2"), pods_fit(2)),
        ("completions alone start one pod", room.clone(), j("completions: 5"), pods_fit(1)),
        ("a suspended Job starts none", room, j("parallelism: 3, suspend: true"), pods_fit(0)),
        ("parallelism over the quota", quota("q", "", "pods=2/0"), j("parallelism: 3"), pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2"))),
    ]);
}

#[test]
fn statefulset_claims_are_charged_per_replica() {
    // Each replica's claims are created (and charged) before its pod; a claim refused stops
    // that replica. Claims get the default StorageClass (§4.2).
    let template = |claims: &[(&str, &str)]| {
        claims
            .iter()
            .map(|(name, size)| format!("{{metadata: {{name: {name}}}, spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}}}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sts = |claims: &[(&str, &str)]| {
        workload("StatefulSet", "db", &format!("replicas: 3, serviceName: db, volumeClaimTemplates: [{}]", template(claims)), &pod("p"))
    };
    workload_rows(vec![
        (
            "storage runs out at the third replica",
            quota("q", "", "requests.storage=10Gi/0"),
            sts(&[("data", "4Gi")]),
            pods_stop(2, 3, exceeded("q", "requests.storage", "4Gi", "8Gi", "10Gi")),
        ),
        (
            "two claims per replica",
            quota("q", "", "persistentvolumeclaims=4/0"),
            sts(&[("data", "1Gi"), ("logs", "1Gi")]),
            pods_stop(2, 3, exceeded("q", "persistentvolumeclaims", "1", "4", "4")),
        ),
        (
            "claims are charged to the default class",
            quota("q", "", "standard.storageclass.storage.k8s.io/requests.storage=5Gi/0"),
            sts(&[("data", "2Gi")]),
            pods_stop(2, 3, exceeded("q", "standard.storageclass.storage.k8s.io/requests.storage", "2Gi", "4Gi", "5Gi")),
        ),
        ("everything fits", quota("q", "", "requests.storage=100Gi/0"), sts(&[("data", "4Gi")]), pods_fit(3)),
    ]);
}

#[test]
fn daemonset_pods_need_the_node_count() {
    // One pod per node: without a node count there is nothing to check.
    let ds = workload("DaemonSet", "agent", "", &pod("p"));
    let rows = [
        ("node count unknown", "pods=2/0", None, OK.to_string()),
        ("three nodes, room for all", "pods=10/0", Some(3), pods_fit(3)),
        ("three nodes, room for two", "pods=2/0", Some(3), pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2"))),
        ("no nodes", "pods=2/0", Some(0), pods_fit(0)),
    ];
    let mut t = Table::default();
    for (what, hard, nodes, want) in rows {
        t.row(what, workload_summary(&quota("q", "", hard), &ds, nodes), want);
    }
    t.done();
}

#[test]
fn cronjob_run_is_not_charged_to_later_documents() {
    // A CronJob's Job and pods come when the schedule fires: one run is evaluated against the
    // current usage and not charged to what follows.
    let cj = |name: &str| workload("CronJob", name, "", &pod("p").with("restartPolicy: Never"));
    let rows = [
        ("a later pod still fits", quota("q", "", "pods=1/0"), docs(&[cj("nightly"), pod("p").yaml()]), vec![pods_fit(1), OK.into()]),
        ("two CronJobs each fit alone", quota("q", "", "pods=1/0"), docs(&[cj("a"), cj("b")]), vec![pods_fit(1), pods_fit(1)]),
        ("its Job is counted", quota("q", "", "count/jobs.batch=0/0"), cj("nightly"), vec![pods_stop(0, 1, exceeded("q", "count/jobs.batch", "1", "0", "0"))]),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&cluster(&[state]), &input).iter().map(summary).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Documents in order (§5 step h: each admitted object is charged before the next)
// ---------------------------------------------------------------------------------------------

/// Rows of (what, state, input documents, expected summary per document).
fn sequence_rows(rows: Vec<(&str, String, String, Vec<String>)>) {
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input).iter().map(|d| charged(d, &["limits.cpu"])).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn documents_are_charged_in_order() {
    let p = |name: &str| pod(name).yaml();
    let other_ns = "apiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere, namespace: other}\nspec: {containers: [{name: app, image: x}]}\n";
    sequence_rows(vec![
        (
            "the third of three pods is refused",
            quota("q", "", "pods=2/0"),
            docs(&[p("a"), p("b"), p("c")]),
            vec![OK.into(), OK.into(), exceeded("q", "pods", "1", "2", "2")],
        ),
        (
            "a refused document charges nothing",
            quota("q", "", "requests.cpu=1/0"),
            docs(&[pod("big").app("a", "requests: {cpu: 2}").yaml(), pod("small").app("a", "requests: {cpu: 1}").yaml()]),
            vec![exceeded("q", "requests.cpu", "2", "0", "1"), OK.into()],
        ),
        ("another namespace has its own quotas", quota("q", "", "pods=1/1"), other_ns.into(), vec![OK.into()]),
    ]);
}

#[test]
fn objects_created_earlier_in_the_input_affect_later_documents() {
    let lr = limit_range("{type: Container, default: {cpu: 500m}}");
    let limits_quota = quota("q", "", "limits.cpu=2/0");
    let new_quota_with_status =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: new}\nspec: {hard: {pods: '0'}}\nstatus: {hard: {pods: '0'}, used: {pods: '0'}}\n";
    sequence_rows(vec![
        // LimitRanger defaults the later pod, satisfying "must specify" (§2.1).
        ("a LimitRange", limits_quota.clone(), docs(&[lr, pod("p").yaml()]), vec![OK.into(), format!("{OK}: limits.cpu=500m")]),
        ("without it", limits_quota, pod("p").yaml(), vec!["failed quota: q: must specify limits.cpu for: app".into()]),
        // §0 step 3 / §5: a new quota has no status until the controller syncs it.
        ("a new quota is not enforced yet", String::new(), docs(&[unsynced_quota("new", "", "pods=0"), pod("p").yaml()]), vec![OK.into(), OK.into()]),
        ("even with a status in the manifest", String::new(), docs(&[new_quota_with_status, &pod("p").yaml()]), vec![OK.into(), OK.into()]),
        // A new quota is itself counted (resourcequotas, §4).
        (
            "new quotas are counted",
            quota("q", "", "resourcequotas=1/0"),
            docs(&[unsynced_quota("a", "", "pods=1"), unsynced_quota("b", "", "pods=1")]),
            vec![OK.into(), exceeded("q", "resourcequotas", "1", "1", "1")],
        ),
        // The Priority plugin sees a PriorityClass created before the pod.
        ("a PriorityClass", docs(&[CLUSTER]), docs(&[priority_class("urgent", 5, false), pod("p").class("urgent").yaml()]), vec![OK.into(), OK.into()]),
    ]);
    // The pod's view of the new quota (§5).
    let d = check_all("", &docs(&[unsynced_quota("new", "", "pods=0"), pod("p").yaml()])).remove(1);
    assert_eq!(verdict(&d, "new"), Some(QuotaVerdict::NotEnforced));
}

#[test]
fn invalid_resource_quota_is_refused_with_field_errors() {
    // §3.5 validation, before admission; messages as a v1.20.2 server printed them
    // (tests/conformance-validation 1019, 1013, 1015, 1020).
    let rows = [
        ("a negative value", "{hard: {count/pods: '-1'}}", "The ResourceQuota \"bad\" is invalid: spec.hard[count/pods]: Invalid value: \"-1\": must be greater than or equal to 0"),
        ("not a quota resource", "{hard: {storage: '3'}}", "The ResourceQuota \"bad\" is invalid: spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota"),
        (
            "conflicting scopes",
            "{hard: {pods: '2'}, scopes: [Terminating, NotTerminating]}",
            "The ResourceQuota \"bad\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Terminating\", \"NotTerminating\"}: conflicting scopes",
        ),
        (
            "a scope that cannot limit the resource",
            "{hard: {cpu: '1'}, scopes: [BestEffort]}",
            "The ResourceQuota \"bad\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\"}: unsupported scope applied to resource",
        ),
    ];
    let mut t = Table::default();
    for (what, spec, want) in rows {
        let d = check_one("", &object("v1", "ResourceQuota", "bad", &format!("spec: {spec}\n")));
        let forbidden = d.refusal.as_ref().map(|r| r.forbidden);
        t.row(what, format!("{} (403: {forbidden:?})", summary(&d)), format!("{want} (403: Some(false))"));
    }
    // A refused quota is neither created nor counted.
    let bad = object("v1", "ResourceQuota", "bad", "spec: {hard: {count/pods: '-1'}}\n");
    let allowed: Vec<bool> =
        check_all(&quota("q", "", "resourcequotas=1/0"), &docs(&[bad, unsynced_quota("good", "", "pods=1")])).iter().map(|d| d.allowed).collect();
    t.row("an invalid quota is not counted", format!("{allowed:?}"), "[false, true]");
    t.done();
}

#[test]
fn unknown_priority_class_is_refused_by_the_priority_plugin() {
    // plugin/pkg/admission/priority/admission.go admitPod: a 403 before quota.
    let rows = [
        ("an unknown class", pod("p").class("nope").yaml(), "no PriorityClass with name nope was found".to_string()),
        ("a system class", pod("p").class("system-cluster-critical").yaml(), OK.into()),
        ("a known class", pod("p").class("high").yaml(), OK.into()),
        (
            "a Deployment's pods",
            workload("Deployment", "web", "replicas: 2", &pod("p").class("nope")),
            pods_stop(0, 2, "no PriorityClass with name nope was found"),
        ),
    ];
    let mut t = Table::default();
    for (what, yaml, want) in &rows {
        t.row(what, summary(&check_one(&docs(&[CLUSTER]), yaml)), want);
    }
    let d = check_one(&docs(&[CLUSTER]), &rows[0].1);
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: no PriorityClass with name nope was found");
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Several quotas (§2.4, §5 step c and h)
// ---------------------------------------------------------------------------------------------

#[test]
fn alternatives_list_the_other_quotas_that_refuse() {
    // The server reports the first refusing quota in its cache's order (undefined); the tool
    // answers in name order and lists the others. Constraint and status failures come from the
    // first loop over quotas, before any exceeded check, so an exceeded quota is never an
    // alternative to them.
    let must = |q: &str, r: &str| format!("failed quota: {q}: must specify {r} for: app");
    let rows = [
        ("both exceeded, first by name", vec![full_pods_quota("b", ""), full_pods_quota("a", "")], vec![full_pods("a"), full_pods("b")]),
        ("only one refuses", vec![full_pods_quota("a", ""), quota("b", "", "pods=10/0")], vec![full_pods("a")]),
        ("must specify beats exceeded", vec![full_pods_quota("a", ""), quota("b", "", "limits.cpu=4/0")], vec![must("b", "limits.cpu")]),
        (
            "two must specify",
            vec![quota("a", "", "limits.cpu=4/0"), quota("b", "", "limits.memory=4Gi/0")],
            vec![must("a", "limits.cpu"), must("b", "limits.memory")],
        ),
        (
            "status unknown beats exceeded",
            vec![full_pods_quota("a", ""), quota("b", "", "requests.ephemeral-storage=1Gi")],
            vec!["status unknown for quota: b, resources: requests.ephemeral-storage".into()],
        ),
    ];
    let mut t = Table::default();
    for (what, quotas, want) in rows {
        let d = check_one(&docs(&quotas), &pod("p").yaml());
        let mut got = vec![summary(&d)];
        got.extend(d.refusal.map(|r| r.alternatives).unwrap_or_default());
        t.row(what, got.join(" | or | "), want.join(" | or | "));
    }
    t.done();
}

// ---------------------------------------------------------------------------------------------
// Suspected bugs: upstream behaviour the tool does not follow (kept, ignored)
// ---------------------------------------------------------------------------------------------

#[test]
fn global_default_priority_class_with_the_lowest_value_wins() {
    // plugin/pkg/admission/priority/admission.go getDefaultPriorityClass (kubernetes/kubernetes
    // @07ef5fd7): "In case more than one global default priority class is added as a result of
    // a race condition, we pick the one with the lowest priority value."
    let state = cluster(&[
        priority_class("default-low", 10, true),
        priority_class("default-high", 1000, true),
        full_pods_quota("q", &sel("PriorityClass", "In", &["default-low"])),
    ]);
    assert_eq!(summary(&check_one(&state, &pod("p").yaml())), full_pods("q"));
}

#[test]
fn pod_level_requests_default_to_the_container_aggregate() {
    // pkg/apis/core/v1/defaults.go defaultPodRequests (kubernetes/kubernetes @023f88a3): for
    // overcommittable pod-level resources (cpu, memory) missing from pod-level requests, the
    // aggregated container requests are copied first; only resources no container requests
    // take the pod-level limit (KEP-2837 defaulting rules).
    let p = pod("p").app("a", "requests: {cpu: 1}").with("resources: {limits: {cpu: 4}}");
    assert_eq!(usage(&check_one("", &p.yaml()), COMPUTE), "limits.cpu=4,requests.cpu=1");
}

#[test]
fn pod_overhead_without_a_runtime_class_is_refused() {
    // plugin/pkg/admission/runtimeclass/admission.go validateOverhead (kubernetes/kubernetes
    // @04791b49): "pod rejected: Pod Overhead set without corresponding RuntimeClass defined
    // Overhead" (403), before quota (RuntimeClass precedes ResourceQuota, §0 step 4).
    let p = pod("p").app("a", "requests: {cpu: 1}").with("overhead: {cpu: 250m}");
    assert_eq!(summary(&check_one(&docs(&[CLUSTER]), &p.yaml())), "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
}

#[test]
fn status_in_a_created_manifest_is_discarded() {
    // §0 step 3 and §1.5: the pod strategy sets status to {phase: Pending} on create, so a new
    // pod is always charged; pkg/registry/core/persistentvolumeclaim/strategy.go
    // PrepareForCreate sets `pvc.Status = api.PersistentVolumeClaimStatus{}`.
    let mut t = Table::default();
    let done = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: x}]}\nstatus: {phase: Succeeded}\n";
    t.row("a pod manifest saying Succeeded is still charged", summary(&check_one(&quota("q", "", "pods=1/1"), done)), full_pods("q"));
    let allocated = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], storageClassName: '', resources: {requests: {storage: 1Gi}}}\nstatus: {allocatedResources: {storage: 5Gi}}\n";
    t.row("a claim manifest's allocatedResources is ignored", usage(&check_one("", allocated), &["requests.storage"]), "requests.storage=1Gi");
    t.done();
}
