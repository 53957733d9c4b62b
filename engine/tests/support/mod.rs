//! Shared by the rule tables: running a check, reading a report, building state and input.
//!
//! Everything runs in namespace `ns`. A quota is written `quota(name, spec, "key=hard/used ...")`:
//! `pods=5/3` is hard 5 with 3 used, `pods=5` a hard value the controller has not computed a
//! used value for; `spec` adds `scopes` / `scopeSelector` (see `sel`).
#![allow(dead_code)]

use std::fmt::Write as _;

pub use kubectl_quota_engine::admission::QuotaVerdict;
pub use kubectl_quota_engine::check::{self, CheckOptions, ClusterState, DocumentReport};
pub use kubectl_quota_engine::{admission_config, manifest, objects, resources};

// ---------------------------------------------------------------------------------------------
// Running a check
// ---------------------------------------------------------------------------------------------

pub const NS: &str = "ns";

pub fn decode(file: &str, text: &str) -> Vec<objects::Object> {
    let docs = manifest::parse_str(file, text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    docs.into_iter()
        .map(|d| {
            let mut o = objects::decode(&d).unwrap_or_else(|e| panic!("{e}\n{text}"));
            objects::keep_source(&mut o, d.value, true);
            o
        })
        .collect()
}

/// Checks `input` against `state`, with an optional admission configuration and node count.
pub fn check_with(state: &str, input: &str, admission: Option<&str>, nodes: Option<u32>) -> Vec<DocumentReport> {
    let limited = admission.map(|a| admission_config::parse("admission.yaml", a).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_default();
    let opts = CheckOptions { namespace: NS.into(), limited, nodes, ..CheckOptions::default() };
    check_opts(state, input, &opts)
}

/// Checks `input` against `state` with the given options (a Kubernetes release's rules, ...).
pub fn check_opts(state: &str, input: &str, opts: &CheckOptions) -> Vec<DocumentReport> {
    let mut cluster = ClusterState::from_objects(decode("state.yaml", state), NS);
    check::check(&mut cluster, decode("input.yaml", input), opts).documents
}

/// Checks `input` against `state` as Kubernetes `version` (`1.27`) would.
pub fn check_version(version: &str, state: &str, input: &str) -> Vec<DocumentReport> {
    let rules = kubectl_quota_engine::version::Rules::for_version(kubectl_quota_engine::version::KubeVersion::parse(version).unwrap());
    check_opts(state, input, &CheckOptions { namespace: NS.into(), rules, ..CheckOptions::default() })
}

pub fn check_all(state: &str, input: &str) -> Vec<DocumentReport> {
    check_with(state, input, None, None)
}

/// The report of a single-document input.
pub fn only(mut reports: Vec<DocumentReport>) -> DocumentReport {
    assert_eq!(reports.len(), 1, "one document expected");
    reports.remove(0)
}

pub fn check_one(state: &str, input: &str) -> DocumentReport {
    only(check_all(state, input))
}

// ---------------------------------------------------------------------------------------------
// Reading a report
// ---------------------------------------------------------------------------------------------

pub const OK: &str = "allowed";

/// `allowed`, or the server's message; for a workload also `; pods <admitted>/<wanted>` and
/// the first refusal its pods met.
pub fn summary(d: &DocumentReport) -> String {
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
pub fn usage_where(d: &DocumentReport, keep: impl Fn(&str) -> bool) -> String {
    resources::pretty_print(&d.usage.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect())
}

pub fn usage(d: &DocumentReport, keys: &[&str]) -> String {
    usage_where(d, |k| keys.contains(&k))
}

/// `allowed: <usage of the names keep accepts>` (just `allowed` when none is charged), else
/// the message.
pub fn charged_where(d: &DocumentReport, keep: impl Fn(&str) -> bool) -> String {
    match (d.allowed, usage_where(d, keep)) {
        (true, u) if u.is_empty() => OK.into(),
        (true, u) => format!("{OK}: {u}"),
        (false, _) => summary(d),
    }
}

pub fn charged(d: &DocumentReport, keys: &[&str]) -> String {
    charged_where(d, |k| keys.contains(&k))
}

/// The summary of an admitted workload whose `n` pods all fit.
pub fn pods_fit(n: i32) -> String {
    format!("{OK}; pods {n}/{n}")
}

/// The summary of an admitted workload whose pods stop at `admitted` of `wanted`.
pub fn pods_stop(admitted: i32, wanted: i32, refusal: impl AsRef<str>) -> String {
    format!("{OK}; pods {admitted}/{wanted}: {}", refusal.as_ref())
}

/// The verdict a named quota gave.
pub fn verdict(d: &DocumentReport, quota: &str) -> Option<QuotaVerdict> {
    d.quotas.iter().find(|q| q.name == quota).map(|q| q.verdict)
}

/// The server's `exceeded quota` message for one resource.
pub fn exceeded(quota: &str, key: &str, requested: &str, used: &str, hard: &str) -> String {
    format!("exceeded quota: {quota}, requested: {key}={requested}, used: {key}={used}, limited: {key}={hard}")
}

/// Collects every row's mismatch, so one run shows all of them.
#[derive(Default)]
pub struct Table(pub Vec<String>);

impl Table {
    pub fn row(&mut self, what: &str, got: impl AsRef<str>, want: impl AsRef<str>) {
        let (got, want) = (got.as_ref(), want.as_ref());
        if got != want {
            self.0.push(format!("{what}\n      want {want:?}\n      got  {got:?}"));
        }
    }

    pub fn done(self) {
        assert!(self.0.is_empty(), "{} row(s) differ:\n  {}", self.0.len(), self.0.join("\n  "));
    }
}

// ---------------------------------------------------------------------------------------------
// Building state and input
// ---------------------------------------------------------------------------------------------

/// `, fields` to append to a flow map, or nothing.
pub fn more(fields: &str) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        format!(", {fields}")
    }
}

/// Joins YAML documents.
pub fn docs<S: AsRef<str>>(parts: &[S]) -> String {
    parts.iter().map(|p| p.as_ref().trim_end().to_string()).collect::<Vec<_>>().join("\n---\n") + "\n"
}

/// Cluster-scoped objects most tests share: PriorityClasses (none is the global default),
/// StorageClasses (`standard` is the default) and a RuntimeClass with overhead.
pub const CLUSTER: &str = "\
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
pub fn cluster<S: AsRef<str>>(extra: &[S]) -> String {
    let mut all = vec![CLUSTER.to_string()];
    all.extend(extra.iter().map(|s| s.as_ref().to_string()));
    docs(&all)
}

pub fn priority_class(name: &str, value: i32, global_default: bool) -> String {
    format!("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\nglobalDefault: {global_default}\n")
}

pub fn storage_class(name: &str, default: bool, created: &str) -> String {
    format!(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}, creationTimestamp: '{created}', annotations: {{storageclass.kubernetes.io/is-default-class: '{default}'}}}}\nprovisioner: x\n"
    )
}

/// `key=hard/used ...` as (hard, used) flow maps.
pub fn hard_used(spec: &str) -> (String, String) {
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
pub fn unsynced_quota(name: &str, spec: &str, resources: &str) -> String {
    let (hard, _) = hard_used(resources);
    format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}}}\nspec: {{hard: {hard}{}}}\n", more(spec))
}

/// A ResourceQuota as the quota controller leaves it: `status.hard` = `spec.hard`, and the used
/// values given.
pub fn quota(name: &str, spec: &str, resources: &str) -> String {
    let (hard, used) = hard_used(resources);
    format!("{}status: {{hard: {hard}, used: {used}}}\n", unsynced_quota(name, spec, resources))
}

/// A quota whose `pods` is used up: it refuses exactly the pods it selects.
pub fn full_pods_quota(name: &str, spec: &str) -> String {
    quota(name, spec, "pods=1/1")
}

/// The refusal of `full_pods_quota`.
pub fn full_pods(name: &str) -> String {
    exceeded(name, "pods", "1", "1", "1")
}

/// `scopeSelector` with one expression.
pub fn sel(scope: &str, operator: &str, values: &[&str]) -> String {
    let values = if values.is_empty() { String::new() } else { format!("values: [{}]", values.join(", ")) };
    format!("scopeSelector: {{matchExpressions: [{{scopeName: {scope}, operator: {operator}{}}}]}}", more(&values))
}

pub fn limit_range(items: &str) -> String {
    format!("apiVersion: v1\nkind: LimitRange\nmetadata: {{name: lr}}\nspec: {{limits: [{items}]}}\n")
}

/// A pod, written as a flow-style spec so it nests in workload templates unchanged.
#[derive(Clone)]
pub struct PodSpec {
    name: String,
    containers: Vec<String>,
    init_containers: Vec<String>,
    extra: Vec<String>,
}

/// A pod named `name`; without `app`/`init`/`sidecar` calls it has one container `app` with no
/// resources.
pub fn pod(name: &str) -> PodSpec {
    PodSpec { name: name.into(), containers: vec![], init_containers: vec![], extra: vec![] }
}

pub fn container(name: &str, resources: &str, extra: &str) -> String {
    format!("{{name: {name}, image: x, resources: {{{resources}}}{extra}}}")
}

impl PodSpec {
    /// A regular container; `resources` is the inside of `resources:`, e.g.
    /// `requests: {cpu: 500m}, limits: {cpu: 1}`.
    pub fn app(mut self, name: &str, resources: &str) -> Self {
        self.containers.push(container(name, resources, ""));
        self
    }

    pub fn init(mut self, name: &str, resources: &str) -> Self {
        self.init_containers.push(container(name, resources, ""));
        self
    }

    /// A restartable init container (`restartPolicy: Always`).
    pub fn sidecar(mut self, name: &str, resources: &str) -> Self {
        self.init_containers.push(container(name, resources, ", restartPolicy: Always"));
        self
    }

    /// Another `spec` field, e.g. `activeDeadlineSeconds: 30`.
    pub fn with(mut self, field: &str) -> Self {
        self.extra.push(field.into());
        self
    }

    pub fn class(self, priority_class: &str) -> Self {
        self.with(&format!("priorityClassName: {priority_class}"))
    }

    pub fn spec(&self) -> String {
        let containers = if self.containers.is_empty() { vec![container("app", "", "")] } else { self.containers.clone() };
        let mut fields = vec![format!("containers: [{}]", containers.join(", "))];
        if !self.init_containers.is_empty() {
            fields.push(format!("initContainers: [{}]", self.init_containers.join(", ")));
        }
        fields.extend(self.extra.iter().cloned());
        format!("{{{}}}", fields.join(", "))
    }

    pub fn yaml(&self) -> String {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {}}}\nspec: {}\n", self.name, self.spec())
    }
}

/// A workload of `kind` whose pods are `template`; `spec` adds fields to the workload's spec
/// (`replicas: 3`, `parallelism: 2`, ...).
pub fn workload(kind: &str, name: &str, spec: &str, template: &PodSpec) -> String {
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
pub fn claim(size: &str, spec: &str, beta_class: Option<&str>) -> String {
    let annotations = beta_class.map(|c| format!(", annotations: {{volume.beta.kubernetes.io/storage-class: '{c}'}}")).unwrap_or_default();
    format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c{annotations}}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}{}}}\n", more(spec))
}

/// A Service `s`.
pub fn service(spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {{{spec}}}\n")
}

/// Any other object: `kind` with `apiVersion`, and optional extra top-level YAML.
pub fn object(api_version: &str, kind: &str, name: &str, extra: &str) -> String {
    format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}}}\n{extra}")
}

/// An AdmissionConfiguration with the given `limitedResources` entries (flow maps).
pub fn limited(entries: &[&str]) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n    limitedResources: [{}]\n",
        entries.join(", ")
    )
}

/// The compute resources most pod rows compare.
pub const COMPUTE: &[&str] = &["requests.cpu", "limits.cpu", "requests.memory", "limits.memory"];
