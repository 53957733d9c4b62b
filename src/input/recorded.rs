//! What `kubectl quota snapshot` recorded in a state file (its List's annotations), read back,
//! and what an offline command makes of it: the release whose rules it answers with, the kinds
//! and namespaces the state knows, and what it could not read.

use std::collections::{BTreeMap, BTreeSet};

use kubectl_quota_engine::check::cluster_kinds::{self, Unread};
use kubectl_quota_engine::check::{ClusterState, Gap, Lacking};
use kubectl_quota_engine::objects;
use kubectl_quota_engine::version::{KubeVersion, Rules, NEWEST, OLDEST};

use crate::error::Fatal;

/// The annotation of the snapshot's List that records the server's version (its
/// gitVersion, `v1.20.2`): offline checks on the snapshot answer with that release's rules.
pub const SERVER_VERSION_ANNOTATION: &str = "kubectl-quota/server-version";
/// The annotation of the snapshot's List that records the cluster-scoped kinds the user could
/// not list when it was taken (`priorityclasses.scheduling.k8s.io,...`): offline checks on the
/// snapshot say what they answer without them.
pub const NOT_READ_ANNOTATION: &str = "kubectl-quota/not-read";
/// The annotation of the snapshot's List that records the namespace a snapshot of one
/// namespace covers: which namespaces exist is known for it alone, and an offline check in
/// another namespace says its answer is incomplete.
pub const NAMESPACE_ANNOTATION: &str = "kubectl-quota/namespace";

/// What `kubectl quota snapshot` recorded in a state file, in its List's annotations
/// ([`SERVER_VERSION_ANNOTATION`], [`NOT_READ_ANNOTATION`], [`NAMESPACE_ANNOTATION`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Recorded {
    /// The file (`-` for standard input).
    pub file: String,
    /// The server's gitVersion when the snapshot was taken.
    pub server_version: Option<String>,
    /// Cluster-scoped kinds the snapshot could not read (`priorityclasses.scheduling.k8s.io`).
    pub not_read: Vec<String>,
    /// The one namespace the snapshot covers (`None`: every namespace, or not recorded).
    pub namespace: Option<String>,
}

/// What the snapshots of one file recorded (nothing for a file `snapshot` did not write).
///
/// The engine's reader hands on a List's items only, so the List's own annotations are read
/// here, from the text: only when the annotations' prefix occurs in it at all, and then only
/// the head of a List as `snapshot` writes it (everything before its top-level `items:`),
/// or, for any other layout, the whole text again.
pub(super) fn recorded_in(file: &str, text: &str) -> Vec<Recorded> {
    if !text.contains(ANNOTATION_PREFIX) {
        return vec![];
    }
    #[derive(serde::Deserialize)]
    struct Head {
        kind: Option<String>,
        metadata: Option<HeadMeta>,
    }
    #[derive(serde::Deserialize)]
    struct HeadMeta {
        annotations: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    }
    let yaml = |text: &str| -> Vec<Head> {
        // Documents that are not mappings (or not YAML) name no head.
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).unwrap_or_default();
        docs.into_iter().filter_map(|d| serde_json::from_value::<Option<Head>>(d).ok().flatten()).collect()
    };
    // JSON (as `snapshot -o json` writes it) is read as JSON, much faster; anything else
    // that opens with a brace (YAML's flow style) as YAML.
    let json = || serde_json::Deserializer::from_str(text).into_iter::<Head>().collect::<Result<Vec<Head>, _>>().ok();
    let heads = match snapshot_head(text) {
        Some(head) => yaml(head),
        None if text.trim_start().starts_with('{') => json().unwrap_or_else(|| yaml(text)),
        None => yaml(text),
    };
    heads
        .into_iter()
        .filter(|h| h.kind.as_deref().is_some_and(|k| k == "List" || k.ends_with("List")))
        .filter_map(|h| {
            let a = h.metadata?.annotations?;
            let get = |k: &str| a.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
            let server_version = get(SERVER_VERSION_ANNOTATION);
            let not_read: Vec<String> =
                get(NOT_READ_ANNOTATION).map(|s| s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()).unwrap_or_default();
            let namespace = get(NAMESPACE_ANNOTATION);
            (server_version.is_some() || !not_read.is_empty() || namespace.is_some()).then(|| Recorded {
                file: file.to_string(),
                server_version,
                not_read,
                namespace,
            })
        })
        .collect()
}

/// The prefix every annotation `snapshot` writes starts with.
const ANNOTATION_PREFIX: &str = "kubectl-quota/";

/// The head of a one-document YAML List as `snapshot` writes it, everything before its
/// top-level `items:` key, when the annotations are all in it; `None` otherwise (the whole
/// text must then be read).
fn snapshot_head(text: &str) -> Option<&str> {
    let at = if text.starts_with("items:") { 0 } else { text.find("\nitems:")? + 1 };
    let (head, rest) = text.split_at(at);
    // Another document, a directive or an annotation after the items: not a head alone.
    let plain = head.lines().all(|l| !l.starts_with("---") && !l.starts_with("...") && !l.starts_with('%'));
    (plain && head.contains(ANNOTATION_PREFIX) && !rest.contains(ANNOTATION_PREFIX)).then_some(head)
}

/// The rules an offline command answers with, and what the state's snapshots say about them.
pub struct OfflineRules {
    pub rules: Rules,
    /// Where the release came from: `flag`, `snapshot` or `default`.
    pub source: &'static str,
    /// The version the snapshot's server reported.
    pub server_version: Option<String>,
    /// Worth saying: a recorded release outside the known range (its nearest is used).
    pub notes: Vec<String>,
    /// What the snapshots could not read: an answer that depends on it is incomplete.
    pub incomplete: Vec<Gap>,
}

/// The rules of an offline command: the release the state's snapshots recorded
/// (`--kubernetes-version` overrides it; snapshots of different releases together are
/// refused, naming both files), else the newest.
pub fn offline_rules(recorded: &[Recorded], flag: Option<KubeVersion>) -> Result<OfflineRules, Fatal> {
    let mut notes = Vec::new();
    let mut first: Option<(&Recorded, &str, KubeVersion)> = None;
    for r in recorded {
        let Some(raw) = r.server_version.as_deref() else { continue };
        let v = KubeVersion::parse(raw).map_err(|e| Fatal::input(format!("{}: annotation {SERVER_VERSION_ANNOTATION}: {e}", r.file)))?;
        match first {
            None => first = Some((r, raw, v)),
            Some((f, fraw, fv)) if fv != v && flag.is_none() => {
                return Err(Fatal::input(format!(
                    "the snapshots were taken from different Kubernetes releases: {} records {fraw}, {} records {raw}; \
                     check against one release at a time, or choose its rules with --kubernetes-version",
                    f.file, r.file
                )))
            }
            Some(_) => {}
        }
    }
    let (rules, source, server_version) = match (flag, first) {
        (Some(v), f) => (Rules::for_version(v), "flag", f.map(|(_, raw, _)| raw.to_string())),
        (None, Some((r, raw, v))) => {
            if !v.supported() {
                notes.push(format!(
                    "the snapshot {} was taken from Kubernetes {raw}, outside the {OLDEST} to {NEWEST} this tool knows: answering with the rules of {}",
                    r.file,
                    v.nearest_supported()
                ));
            }
            (Rules::for_version(v), "snapshot", Some(raw.to_string()))
        }
        (None, None) => (Rules::current(), "default", None),
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut incomplete = Vec::new();
    for r in recorded {
        for kind in &r.not_read {
            if seen.insert(kind.as_str()) {
                incomplete.extend(not_read_note(&r.file, kind, &rules).map(|text| Gap { lacking: Lacking::of_resource(kind), text }));
            }
        }
    }
    Ok(OfflineRules { rules, source, server_version, notes, incomplete })
}

/// What the state's snapshots say of the kinds a state can lack ([`Lacking`]): a snapshot
/// read every one of them it does not record as not read, so none of a kind in it means none
/// in the cluster; one it could not read is not known, whatever other files hold.
pub fn kinds_known(state: &mut ClusterState, recorded: &[Recorded]) {
    // A row a snapshot could not read is not known, whatever other files hold of it.
    for k in cluster_kinds::CLUSTER_KINDS {
        if k.group == kubectl_quota_engine::kueue::GROUP && recorded.iter().any(|r| r.not_read.iter().any(|n| *n == k.recorded_as())) {
            state.not_read(k);
        }
    }
    for kind in Lacking::ALL {
        let resource = kind.resource();
        if recorded.iter().any(|r| r.not_read.contains(&resource)) {
            // Known unless said otherwise: forgotten here.
            if matches!(kind, Lacking::ResourceClaimTemplates | Lacking::VerticalPodAutoscalers) {
                state.forget(kind);
            }
        } else if recorded.iter().any(|r| r.server_version.is_some() || r.namespace.is_some()) {
            state.know_all(kind);
        }
    }
}

/// What an offline state says of the namespaces the documents go to.
#[derive(Debug, Default)]
pub struct NamespacesKnown {
    /// Gaps: namespaces outside what the state's snapshots of one namespace cover.
    pub outside: Vec<String>,
    /// Gaps: namespaces the state says nothing about while it holds other namespaces' quotas
    /// (likely a snapshot of another namespace, but it may be a namespace still to fill).
    pub unlisted: Vec<String>,
    /// Namespaces the state knows but where no quota limits anything.
    pub unlimited: Vec<String>,
}

/// Reads which namespaces the documents go to against what the state knows of them.
///
/// A snapshot of one namespace (it records that namespace) knows whether that namespace
/// exists: a check there refuses objects in it when it does not, as the server does. Of any
/// other namespace it knows nothing: the answer is incomplete, and nothing is refused as
/// missing (the state then forgets which namespaces exist). A state without that record
/// (a snapshot of every namespace, or hand-written files) knows the Namespaces it holds, if
/// any. A namespace the state says nothing about (no quota, LimitRange, object or Namespace)
/// while it holds quotas of other namespaces is a gap too: the state is likely a snapshot of
/// another namespace.
pub fn namespaces_known(state: &mut ClusterState, recorded: &[Recorded], objs: &[objects::Object], default: &str) -> NamespacesKnown {
    let covered: BTreeMap<&str, &str> = recorded.iter().filter_map(|r| Some((r.namespace.as_deref()?, r.file.as_str()))).collect();
    let read = !recorded.iter().any(|r| r.not_read.contains(&cluster_kinds::NAMESPACE.recorded_as()));
    if !covered.is_empty() && read {
        state.namespaces.get_or_insert_with(BTreeMap::new);
    }
    let targets: BTreeSet<&str> = objs.iter().filter(|o| o.type_info.namespaced).map(|o| o.meta.namespace.as_deref().unwrap_or(default)).collect();
    // Namespaces the manifests create themselves are known.
    let created: BTreeSet<&str> =
        objs.iter().filter(|o| o.type_info.kind == "Namespace" && o.type_info.group.is_empty()).map(|o| o.meta.name.as_str()).collect();
    let elsewhere = !state.quota_namespaces().is_empty();
    let mut out = NamespacesKnown::default();
    let mut outside = false;
    for ns in targets.into_iter().filter(|ns| !created.contains(ns)) {
        let key = (ns.to_string(), String::new(), String::new());
        let quota = state.quotas.get(ns).is_some_and(|q| !q.is_empty());
        let listed = state.namespaces.as_ref().is_some_and(|n| n.contains_key(ns));
        let known = quota || listed || state.limit_ranges.contains_key(ns) || state.existing.range(key..).next().is_some_and(|(k, _)| k.0 == ns);
        let uncovered = !covered.is_empty() && !covered.contains_key(ns);
        // Whether it exists is not known (other files may still say what is in it).
        outside |= uncovered && !listed;
        if uncovered && !known {
            let of: Vec<String> = covered.iter().map(|(n, f)| format!("{f} covers namespace {n:?}")).collect();
            out.outside.push(format!("the state says nothing of namespace {ns:?} (whether it exists, its quotas): {} only", of.join(", ")));
        } else if covered.is_empty() && state.namespaces.as_ref().is_some_and(|n| !n.contains_key(ns)) {
            // The state lists the cluster's Namespaces (`snapshot -A`) and NS is not among
            // them: the check refuses it as missing, which says all there is to say.
        } else if !quota && elsewhere && !known {
            out.unlisted.push(format!(
                "the state holds nothing about namespace {ns:?} (no quota, LimitRange or object there), only other namespaces' quotas: it may be a snapshot of another namespace"
            ));
        } else if !quota {
            out.unlimited.push(ns.to_string());
        }
    }
    if outside {
        state.namespaces = None;
    }
    out
}

/// What an offline check answers without a kind the snapshot could not read, as its row of
/// the cluster-data kinds says; `None` for an API the release does not serve (nothing to
/// miss), and for kinds left out without a word: without the webhook configurations no
/// webhook is named, without the admission policies none is replayed, as live for a user
/// who may not list them (the built-in `view` role may not), and the verdicts are the same.
fn not_read_note(file: &str, kind: &str, rules: &Rules) -> Option<String> {
    let (what, consequence) = match cluster_kinds::CLUSTER_KINDS.iter().find(|k| k.recorded_as() == kind) {
        Some(k) if !k.served_at(rules.version) => return None,
        Some(k) => match k.unread {
            Unread::Gap(consequence) => (k.kinds(), consequence),
            Unread::Fatal => (k.kinds(), "nothing can be decided"),
            Unread::Unsaid => return None,
        },
        // Read for the cluster views only (capacity, blocked): a check never consults them.
        None if matches!(kind, "nodes.core" | "events.core" | "resourceslices.resource.k8s.io" | "workloads.kueue.x-k8s.io") => return None,
        None => (kind.to_string(), "the check answers without them"),
    };
    Some(format!("{what} could not be read when the snapshot {file} was taken: {consequence}"))
}
