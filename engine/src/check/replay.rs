//! One document through the API server's steps (mutation, then quota admission), and a
//! workload through its controllers: the objects they create, replica by replica or, for
//! identical replicas, all at once without a loop per replica.

use super::report::{CheckOptions, PodsReport};
use super::state::ClusterState;
use std::collections::{BTreeMap, BTreeSet};

use crate::admission::{self, Cluster, Decision, Refusal};
use crate::objects::{type_info, Body, Meta, Object, Vpa, Workload};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

mod identical;
use identical::{charge_units, identical_units_that_fit, used_in};

/// One object through the admission chain in namespace `ns` (an update of the object the
/// state holds under its name, else a create), charging the quotas when admitted. `as_sent`:
/// a document as the user sent it, not an object a controller makes.
pub(super) fn admit_as(obj: &mut Object, state: &mut ClusterState, ns: &str, opts: &CheckOptions, as_sent: bool) -> (Decision, Vec<String>) {
    // A Pod document is the pod the server was asked for, if it was.
    let asked = as_sent && matches!(obj.body, Body::Pod(_));
    admit_through(obj, state, ns, opts, as_sent, None, asked)
}

/// [`admit_as`], with the VerticalPodAutoscaler whose webhook writes the pod's requests;
/// `asked`: the object is the pod a dry run asked the server for (a Pod document as written,
/// a pod made from its workload's template), whose answer the webhooks' step takes.
fn admit_through(
    obj: &mut Object,
    state: &mut ClusterState,
    ns: &str,
    opts: &CheckOptions,
    as_sent: bool,
    vpa: Option<(&str, &Vpa)>,
    asked: bool,
) -> (Decision, Vec<String>) {
    // Borrowed, not copied: the old object of a large workload is most of its size again.
    let old = state.existing.get(&(ns.to_string(), obj.type_info.group_resource(), obj.meta.name.clone()));
    let dry_runs = std::sync::Arc::clone(&state.dry_runs);
    let server = match dry_runs.get(&super::dry_run::source_of(&obj.origin)).filter(|_| asked && old.is_none()) {
        Some(super::dry_run::DryRun { answer: Ok(answer), webhooks, stood_in }) => Some((answer, webhooks.as_slice(), stood_in.as_slice())),
        _ => None,
    };
    // What the chain consults, beside the quotas it charges.
    let cluster = Cluster {
        namespaces: state.namespaces.as_ref(),
        terminating: Some(&state.terminating),
        service_accounts: state.service_accounts.get(ns),
        limit_ranges: state.limit_ranges.get(ns).map(Vec::as_slice).unwrap_or_default(),
        priority_classes: state.priority_classes.as_ref(),
        runtime_classes: state.runtime_classes.as_ref(),
        storage_classes: state.storage_classes.as_deref(),
        device_classes: state.device_classes.as_ref(),
        vpa,
        policies: state.policies.as_deref(),
        params: Some(&state.params),
        server,
    };
    let quotas = state.quotas.entry(ns.to_string()).or_default();
    let flags = admission::ServerFlags { allow_privileged: opts.allow_privileged.unwrap_or(true) };
    let chain =
        admission::Options { rules: &opts.rules, limited: &opts.limited, detail: opts.detail, as_sent, flags, pod_security: opts.pod_security.as_ref() };
    admission::admit(obj, old, ns, &cluster, quotas, &chain)
}

/// A pod `w`'s controller makes, through the admission chain and its VerticalPodAutoscaler's
/// webhook, if one targets `w`.
pub(super) fn admit_pod_of(pod: &mut Object, w: &Workload, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> (Decision, Vec<String>) {
    // The server's answer is for the template's pod, not for a running pod of another.
    let asked = matches!(&pod.body, Body::Pod(p) if *p == w.template);
    admit_through(pod, state, ns, opts, false, w.vpa.as_ref().map(|(n, v)| (n.as_str(), &**v)), asked)
}

/// What one pod of `w` (`pod`: its template, or a pod of it that exists; `name`: the name
/// its refusal gives it) charges each of the
/// namespace's quotas, by quota name: admitted against the quotas opened wide.
pub(super) fn pod_charge(
    obj: &Object,
    w: &Workload,
    pod: Body,
    name: String,
    state: &ClusterState,
    ns: &str,
    opts: &CheckOptions,
) -> Result<BTreeMap<String, ResourceList>, String> {
    let mut scratch = state.scratch_for(ns);
    for q in scratch.quotas.values_mut().flatten() {
        q.quota.status_hard.values_mut().for_each(|v| *v = Quantity::parse("1E").expect("valid"));
    }
    let before = scratch.quotas.get(ns).cloned().unwrap_or_default();
    let mut pod = child(obj, "v1", "Pod", name, pod, &w.template_meta);
    let (d, _) = admit_pod_of(&mut pod, w, &mut scratch, ns, opts);
    if let Some(r) = d.refusal {
        return Err(r.message);
    }
    let after = scratch.quotas.get(ns).cloned().unwrap_or_default();
    Ok(after
        .iter()
        .zip(&before)
        .map(|(a, b)| {
            (a.name.clone(), a.quota.status_used.iter().map(|(k, v)| (k.clone(), v.sub(&b.quota.status_used.get(k).cloned().unwrap_or_default()))).collect())
        })
        .collect())
}

/// An object a controller makes, through the admission chain (see [`admit_as`]).
pub(super) fn admit(obj: &mut Object, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> (Decision, Vec<String>) {
    admit_as(obj, state, ns, opts, false)
}

/// A child object a controller creates.
pub(super) fn child(parent: &Object, api_version: &str, kind: &str, name: String, body: Body, meta: &Meta) -> Object {
    Object {
        origin: parent.origin.clone(),
        type_info: type_info(api_version, kind),
        meta: Meta { name, generate_name: None, namespace: parent.meta.namespace.clone(), ..meta.clone() },
        body,
        source: Default::default(),
    }
}

/// How a workload's controller creates its pods.
pub(super) struct PodsOutcome {
    pub(super) wanted: Option<i32>,
    pub(super) admitted: i32,
    pub(super) first_refusal: Option<Refusal>,
    pub(super) explained: Option<PodsReport>,
    pub(super) notes: Vec<String>,
    /// Numbers (as in their names) of created pods whose claims quota refuses: consecutive,
    /// since once one pod's claims are refused every later pod's are too.
    pub(super) claims_refused: PodNumbers,
    pub(super) claim_refusal: Option<Refusal>,
}

/// DRA: the claims the resourceclaim controller creates for a pod from its templates, admitted
/// after the pod. Returns the first refusal and notes (templates that are not there).
pub(super) fn admit_pod_claims(pod: &Object, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> (Option<Refusal>, Vec<String>) {
    let lookup = |t: &str| match state.existing.get(&(ns.to_string(), "resourceclaimtemplates.resource.k8s.io".to_string(), t.to_string())).map(|o| &o.body) {
        Some(Body::ResourceClaimTemplate(c)) => Some(c.clone()),
        _ => None,
    };
    let (claims, unknown) = crate::dra::pod_claims(pod, lookup);
    let notes = unknown
        .iter()
        .map(|t| format!("ResourceClaimTemplate {t:?} is neither in the cluster nor earlier in the manifests: the pod's claim cannot be created and the pod stays Pending"))
        .collect();
    for mut c in claims {
        let (d, _) = admit(&mut c, state, ns, opts);
        if let Some(r) = d.refusal {
            return (Some(r), notes);
        }
    }
    (None, notes)
}

/// A run of consecutive pod numbers, held as its ends (a replica count can be 2^31).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PodNumbers(Option<(i32, i32)>);

impl PodNumbers {
    fn push(&mut self, n: i32) {
        self.push_range(n, n);
    }

    fn push_range(&mut self, first: i32, last: i32) {
        self.0 = Some(match self.0 {
            Some((a, _)) => (a, last),
            None => (first, last),
        });
    }

    pub(super) fn len(&self) -> i32 {
        self.0.map_or(0, |(a, b)| b - a + 1)
    }

    /// "pods 3–4" / "pod 3".
    pub(super) fn describe(&self) -> String {
        match self.0 {
            Some((a, b)) if a != b => format!("pods {a}\u{2013}{b}"),
            Some((a, _)) => format!("pod {a}"),
            None => String::new(),
        }
    }
}

/// Replays the controllers: the intermediate object (ReplicaSet, Job), then per replica the
/// StatefulSet claims and the pod, stopping at the first refusal (all replicas are alike, so
/// once one is refused the rest are too).
/// `existing` is the pods of a workload that exists already (an update): only the ones above
/// them are created, and the intermediate object is not created again.
///
/// `each_replica` replays every replica in full (the slow, obviously right way, kept as the
/// oracle the tests compare the fast path with).
pub(super) fn admit_workload_pods(
    obj: &Object,
    w: &Workload,
    existing: Option<i32>,
    state: &mut ClusterState,
    ns: &str,
    opts: &CheckOptions,
    each_replica: bool,
) -> PodsOutcome {
    let kind = obj.type_info.kind.as_str();
    let running = existing.unwrap_or(0);
    let mut out = PodsOutcome {
        wanted: w.replicas,
        admitted: running,
        first_refusal: None,
        explained: None,
        notes: vec![],
        claims_refused: PodNumbers::default(),
        claim_refusal: None,
    };
    let Some(wanted) = wanted_pods(kind, w, opts, &mut out) else { return out };
    out.admitted = running.min(wanted);
    if existing.is_none() && !admit_intermediate(obj, w, state, ns, opts, &mut out) {
        return out;
    }
    let pod_prefix = match kind {
        "StatefulSet" => format!("{}-", obj.meta.name),
        "Deployment" => format!("{}-<hash>-", obj.meta.name),
        _ => format!("{}-", obj.meta.name),
    };
    // Replicas whose pod or claim name exists already are updates, not creates: never skipped over.
    let blocked = existing_replicas(state, ns, obj, w, kind, &pod_prefix);
    let mut i = running;
    while i < wanted {
        // Every replica asks for the same thing, so once one is admitted, the quotas' used
        // grows by the same amount per replica: how many more fit is a division per quota,
        // and only the replica that would be refused (or the last one) is replayed in full.
        let before = (!each_replica && wanted - i > 2 && !blocked.contains(&i64::from(i))).then(|| used_in(state, ns));
        let first_claim_refusal = match admit_replica(obj, w, i, &pod_prefix, state, ns, opts, &mut out) {
            Replica::Refused => return out,
            Replica::Admitted { first_claim_refusal } => first_claim_refusal,
        };
        out.admitted += 1;
        i += 1;
        // The replica whose claims were first refused may have charged some of its claims:
        // later replicas charge only their pod, so the next one is replayed in full first.
        if let Some(before) = before.filter(|_| !first_claim_refusal) {
            // Skip replicas i .. i+jump-1; replica i+jump is replayed in full. `before` was
            // taken before this replica's claims templates, pod and DRA claims, so one unit is
            // all of them (the pod alone once claims are refused: every later replica alike).
            let mut cap = i64::from(wanted - i) - 1;
            if let Some(next) = blocked.range(i64::from(i)..).next() {
                cap = cap.min(next - i64::from(i));
            }
            let jump = identical_units_that_fit(state, ns, &before, cap);
            if jump > 0 {
                charge_units(state, ns, &before, jump);
                let jump = i32::try_from(jump).expect("jump is below the replica count, an i32");
                if out.claim_refusal.is_some() {
                    let first = if kind == "StatefulSet" { i } else { i + 1 };
                    out.claims_refused.push_range(first, first + jump - 1);
                }
                out.admitted += jump;
                i += jump;
            }
        }
    }
    out
}

/// How many pods the workload's controller wants: a DaemonSet one per node (`--nodes`; with
/// no count, none is checked and a note says so), any other its replicas (1 when unset).
fn wanted_pods(kind: &str, w: &Workload, opts: &CheckOptions, out: &mut PodsOutcome) -> Option<i32> {
    match (kind, w.replicas, opts.nodes) {
        ("DaemonSet", _, Some(n)) => {
            // The plugin refuses counts above i32::MAX; saturate rather than wrap if one slips by.
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            out.wanted = Some(n);
            Some(n)
        }
        // Left undecided by the caller (`Checker::workload_pods`), which says why.
        ("DaemonSet", _, None) => None,
        (_, Some(r), _) => Some(r),
        (_, None, _) => Some(1),
    }
}

/// The object a new workload's controller creates before any pod (a Deployment's ReplicaSet,
/// a CronJob's Job). Returns whether it is admitted.
fn admit_intermediate(obj: &Object, w: &Workload, state: &mut ClusterState, ns: &str, opts: &CheckOptions, out: &mut PodsOutcome) -> bool {
    let (av, k, name) = match obj.type_info.kind.as_str() {
        "Deployment" => ("apps/v1", "ReplicaSet", format!("{}-<hash>", obj.meta.name)),
        "CronJob" => ("batch/v1", "Job", format!("{}-<schedule>", obj.meta.name)),
        _ => return true,
    };
    let mut inter = child(obj, av, k, name, Body::Other, &w.template_meta);
    let (d, _) = admit(&mut inter, state, ns, opts);
    match d.refusal {
        Some(r) => {
            out.notes.push(format!("the {k} {} would be refused, so no pod is created", inter.meta.name));
            out.first_refusal = Some(r);
            false
        }
        None => true,
    }
}

/// How one replica went.
enum Replica {
    /// Its claim or its pod is refused: no later replica is created either.
    Refused,
    /// Its pod is created; `first_claim_refusal`: its ResourceClaims are the first refused.
    Admitted { first_claim_refusal: bool },
}

/// Replica `i` in full: its StatefulSet claims, its pod, then the pod's ResourceClaims, which
/// the resourceclaim controller creates once the pod exists. A refused ResourceClaim leaves
/// its pod Pending; pods do not charge claim quotas, so every later pod's claims are refused
/// alike.
#[allow(clippy::too_many_arguments)]
fn admit_replica(
    obj: &Object,
    w: &Workload,
    i: i32,
    pod_prefix: &str,
    state: &mut ClusterState,
    ns: &str,
    opts: &CheckOptions,
    out: &mut PodsOutcome,
) -> Replica {
    let statefulset = obj.type_info.kind == "StatefulSet";
    for (claim, pvc) in &w.volume_claim_templates {
        let mut c =
            child(obj, "v1", "PersistentVolumeClaim", format!("{claim}-{}-{i}", obj.meta.name), Body::PersistentVolumeClaim(pvc.clone()), &Meta::default());
        let (d, _) = admit(&mut c, state, ns, opts);
        if let Some(r) = d.refusal {
            out.first_refusal = Some(r);
            out.notes.push(format!("claim {} for replica {i} would be refused, so that pod is not created", c.meta.name));
            return Replica::Refused;
        }
    }
    let number = if statefulset { i } else { i + 1 };
    let mut pod = child(obj, "v1", "Pod", format!("{pod_prefix}{number}"), Body::Pod(w.template.clone()), &w.template_meta);
    let (d, mutations) = admit_pod_of(&mut pod, w, state, ns, opts);
    out.explained = Some(PodsReport { pod: pod.meta.name.clone(), allowed: d.allowed, usage: d.usage, mutations, quotas: d.quotas });
    if let Some(r) = d.refusal {
        out.first_refusal = Some(r);
        return Replica::Refused;
    }
    if w.template.resource_claim_templates.is_empty() {
        return Replica::Admitted { first_claim_refusal: false };
    }
    if out.claim_refusal.is_some() {
        out.claims_refused.push(number);
        return Replica::Admitted { first_claim_refusal: false };
    }
    let (refusal, notes) = admit_pod_claims(&pod, state, ns, opts);
    if out.notes.is_empty() {
        out.notes.extend(notes);
    }
    let Some(r) = refusal else { return Replica::Admitted { first_claim_refusal: false } };
    out.claims_refused.push(number);
    out.claim_refusal = Some(r);
    Replica::Admitted { first_claim_refusal: true }
}

/// Replica indexes whose pod or claim already exists (by name) in `ns`.
fn existing_replicas(state: &ClusterState, ns: &str, obj: &Object, w: &Workload, kind: &str, pod_prefix: &str) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    let mut scan = |resource: &str, prefix: &str, offset: i64| {
        let start = (ns.to_string(), resource.to_string(), prefix.to_string());
        let here = |(n, r, name): &&(String, String, String)| n == ns && r == resource && name.starts_with(prefix);
        let existing = state.existing.range(start.clone()..).map(|(k, _)| k).take_while(here);
        for (_, _, name) in existing.chain(state.seen.range(start..).take_while(here)) {
            if let Ok(v) = name[prefix.len()..].parse::<i64>() {
                out.insert(v - offset);
            }
        }
    };
    scan("pods", pod_prefix, if kind == "StatefulSet" { 0 } else { 1 });
    for (claim, _) in &w.volume_claim_templates {
        scan("persistentvolumeclaims", &format!("{claim}-{}-", obj.meta.name), 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::admission::{Detail, QuotaReport, QuotaVerdict};
    use crate::check::{Checker, DocumentReport};
    use crate::manifest::parse_str;
    use crate::objects::decode;

    fn objects_of(file: &str, text: &str) -> Vec<Object> {
        parse_str(file, text).unwrap_or_else(|e| panic!("{e}\n{text}")).iter().map(|d| decode(d).unwrap_or_else(|e| panic!("{e}\n{text}"))).collect()
    }

    /// A tiny deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    /// A random namespace: 0-4 quotas over pod and claim resources, with scopes, odd units
    /// and used values, sometimes a LimitRange, sometimes an existing pod whose name a
    /// workload's replica will reuse.
    fn random_case(rng: &mut Rng) -> (String, String, Option<u32>) {
        let mut state = String::new();
        let resources = [
            ("pods", &["3", "7", "20", "100"][..]),
            ("count/pods", &["5", "40"][..]),
            ("requests.cpu", &["1", "2500m", "10", "333m"][..]),
            ("limits.cpu", &["2", "7"][..]),
            ("requests.memory", &["1Gi", "3000Mi", "1G", "2.5Gi"][..]),
            ("limits.memory", &["4Gi", "10G"][..]),
            ("persistentvolumeclaims", &["4", "30"][..]),
            ("requests.storage", &["10Gi", "55Gi", "1Ti"][..]),
            ("count/persistentvolumeclaims", &["6"][..]),
            ("requests.ephemeral-storage", &["5Gi"][..]),
        ];
        for qi in 0..rng.below(5) {
            let mut hard = Vec::new();
            let mut used = Vec::new();
            for (r, values) in resources {
                if rng.below(3) == 0 {
                    hard.push(format!("{r}: '{}'", rng.pick(values)));
                    if rng.below(8) != 0 {
                        used.push(format!("{r}: '{}'", rng.pick(&["0", "1", "100m", "512Mi", "2"])));
                    }
                }
            }
            let spec_extra = match rng.below(6) {
                0 => "  scopes: [NotBestEffort]\n",
                1 => "  scopes: [BestEffort]\n",
                2 => "  scopes: [NotTerminating]\n",
                _ => "",
            };
            let _ = write!(
                state,
                "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q{qi}, namespace: ns}}\nspec:\n  hard: {{{h}}}\n{spec_extra}status:\n  hard: {{{h}}}\n  used: {{{u}}}\n",
                h = hard.join(", "),
                u = used.join(", ")
            );
        }
        if rng.below(3) == 0 {
            state.push_str("---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: ns}\nspec: {limits: [{type: Container, default: {cpu: 500m, memory: 256Mi}, defaultRequest: {cpu: 100m, memory: 128Mi}}]}\n");
        }
        if state.is_empty() {
            state.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nothing, namespace: ns}\n");
        }
        let mut input = String::new();
        let kind = rng.pick(&["Deployment", "StatefulSet", "Job", "ReplicationController", "ReplicaSet", "CronJob", "DaemonSet"]);
        let replicas = rng.below(40);
        let requests = match rng.below(5) {
            0 => "{}".to_string(),
            1 => format!("{{requests: {{cpu: {}}}}}", rng.pick(&["100m", "250m", "1", "333m"])),
            2 => format!("{{requests: {{cpu: {}, memory: {}}}, limits: {{cpu: '1', memory: 1Gi}}}}", rng.pick(&["100m", "50m"]), rng.pick(&["64Mi", "200M"])),
            3 => "{limits: {cpu: 200m, memory: 100Mi, ephemeral-storage: 1Gi}}".to_string(),
            _ => "{requests: {ephemeral-storage: 300Mi, cpu: 10m}}".to_string(),
        };
        if rng.below(4) == 0 {
            // A pod already there under the name of one of the replicas: that replica is an update.
            let n = rng.below(replicas + 1);
            let name = match kind {
                "StatefulSet" => format!("w-{n}"),
                "Deployment" => format!("w-<hash>-{n}"),
                _ => format!("w-{n}"),
            };
            let _ = write!(input, "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 10m}}}}}}]}}\n");
        }
        let template = format!(
            "metadata: {{labels: {{app: w}}}}\n    spec:\n      restartPolicy: {}\n      containers: [{{name: c, image: x, resources: {requests}}}]\n",
            if matches!(kind, "Job" | "CronJob") { "Never" } else { "Always" }
        );
        let _ = match kind {
            "Deployment" | "ReplicaSet" => write!(input, "---\napiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: w}}}}\n  template:\n    {template}"),
            "ReplicationController" => write!(input, "---\napiVersion: v1\nkind: ReplicationController\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  template:\n    {template}"),
            "DaemonSet" => write!(input, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: w}}\nspec:\n  selector: {{matchLabels: {{app: w}}}}\n  template:\n    {template}"),
            "Job" => write!(input, "---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: w}}\nspec:\n  parallelism: {replicas}\n  template:\n    {template}"),
            "CronJob" => write!(
                input,
                "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: w}}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      parallelism: {replicas}\n      template:\n        {}",
                template.replace("\n    ", "\n        ")
            ),
            _ => {
                let mut claims = String::new();
                for c in 0..rng.below(3) {
                    let _ = write!(claims, "  - metadata: {{name: data{c}}}\n    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {}}}}}}}\n", rng.pick(&["1Gi", "5Gi", "1500Mi"]));
                }
                let claims = if claims.is_empty() { String::new() } else { format!("  volumeClaimTemplates:\n{claims}") };
                write!(input, "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: w}}}}\n{claims}  template:\n    {template}")
            }
        };
        // Something after the workload sees what it left in the quotas.
        input.push_str("---\napiVersion: v1\nkind: Pod\nmetadata: {name: after}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}}]}\n");
        (state, input, (kind == "DaemonSet").then(|| rng.below(30) as u32))
    }

    fn run(state_text: &str, input: &str, nodes: Option<u32>, each_replica: bool) -> (Vec<DocumentReport>, Vec<ResourceList>) {
        run_detailed(state_text, input, nodes, each_replica, Detail::Full)
    }

    fn run_detailed(state_text: &str, input: &str, nodes: Option<u32>, each_replica: bool, detail: Detail) -> (Vec<DocumentReport>, Vec<ResourceList>) {
        let mut state = ClusterState::from_objects(objects_of("state.yaml", state_text), "ns");
        let opts = CheckOptions { namespace: "ns".into(), limited: vec![], nodes, detail, ..CheckOptions::default() };
        let mut checker = Checker::new(&mut state, &opts);
        checker.each_replica = each_replica;
        let docs: Vec<DocumentReport> = objects_of("input.yaml", input).into_iter().map(|o| checker.check_one(o)).collect();
        (docs, used_in(&state, "ns"))
    }

    #[test]
    fn replica_replay_without_a_loop_per_replica_agrees_with_the_replica_by_replica_replay() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut short = 0;
        for case in 0..600 {
            let (state, input, nodes) = random_case(&mut rng);
            let fast = run(&state, &input, nodes, false);
            let oracle = run(&state, &input, nodes, true);
            assert_eq!(fast, oracle, "case {case}\nstate:\n{state}\ninput:\n{input}");
            short += fast.0.iter().filter(|d| d.replicas_admitted.zip(d.replicas).is_some_and(|(a, w)| a < w)).count();
        }
        // The cases exercise refusals part-way through, not only workloads that fit whole.
        assert!(short > 50, "only {short} workloads were short of replicas");
    }

    #[test]
    fn explaining_only_refusals_decides_and_charges_exactly_as_explaining_everything() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for case in 0..600 {
            let (state, input, nodes) = random_case(&mut rng);
            let (mut full, full_used) = run_detailed(&state, &input, nodes, false, Detail::Full);
            let (lean, lean_used) = run_detailed(&state, &input, nodes, false, Detail::Refusals);
            assert_eq!(full_used, lean_used, "case {case}");
            // The lean report is the full one less the quotas that do not refuse, and less
            // the explanations of the refusing ones (their verdicts, rows and missing kept).
            let keep = |quotas: &mut Vec<QuotaReport>| {
                quotas.retain(|q| matches!(q.verdict, QuotaVerdict::Exceeded | QuotaVerdict::MustSpecify | QuotaVerdict::StatusUnknown));
                for q in quotas.iter_mut() {
                    (q.why, q.scopes) = (String::new(), vec![]);
                }
            };
            for d in &mut full {
                keep(&mut d.quotas);
                if let Some(p) = &mut d.pods {
                    keep(&mut p.quotas);
                }
            }
            assert_eq!(full, lean, "case {case}\nstate:\n{state}\ninput:\n{input}");
        }
    }

    #[test]
    fn identical_replicas_need_no_loop_per_replica() {
        let state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cpu, namespace: ns}\nspec: {hard: {requests.cpu: '1000'}}\nstatus: {hard: {requests.cpu: '1000'}, used: {requests.cpu: '1'}}\n";
        for (kind, extra, spec) in [
            ("Deployment", "apps/v1", "replicas: 2147483647\n  selector: {}\n"),
            ("ReplicationController", "v1", "replicas: 2147483647\n"),
            ("Job", "batch/v1", "parallelism: 2147483647\n"),
            ("StatefulSet", "apps/v1", "replicas: 2147483647\n  selector: {}\n  volumeClaimTemplates:\n  - metadata: {name: a}\n    spec: {resources: {requests: {storage: 1Gi}}}\n  - metadata: {name: b}\n    spec: {resources: {requests: {storage: 1Gi}}}\n"),
        ] {
            // Only a Job's pods may, and must, not restart always.
            let policy = if kind == "Job" { "restartPolicy: Never, " } else { "" };
            let input = format!(
                "apiVersion: {extra}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  {spec}  template: {{spec: {{{policy}containers: [{{name: c, image: x, resources: {{requests: {{cpu: 1m}}}}}}]}}}}\n"
            );
            let (docs, used) = run(state, &input, None, false);
            // (1000 - 1) / 0.001 = 999,000 fit; the next is refused with the server's text.
            assert_eq!(docs[0].replicas_admitted, Some(999_000), "{kind}");
            assert_eq!(docs[0].pod_message.as_deref(), Some("exceeded quota: cpu, requested: requests.cpu=1m, used: requests.cpu=1k, limited: requests.cpu=1k"), "{kind}");
            assert_eq!(used[0]["requests.cpu"].to_string(), "1k");
        }
        let input = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 2147483647\n  selector: {}\n  template: {spec: {containers: [{name: c, image: x}]}}\n";
        let (docs, _) = run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n", input, None, false);
        assert_eq!((docs[0].replicas, docs[0].replicas_admitted), (Some(i32::MAX), Some(i32::MAX)));
        let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: {containers: [{name: c, image: x}]}}}\n";
        let (docs, _) = run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n", ds, Some(u32::MAX), false);
        assert_eq!((docs[0].replicas, docs[0].replicas_admitted), (Some(i32::MAX), Some(i32::MAX)));
        let negative = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: -5\n  selector: {}\n  template: {spec: {containers: [{name: c, image: x}]}}\n";
        let (docs, _) = run(state, negative, None, false);
        assert_eq!(docs.len(), 1);
    }
}
