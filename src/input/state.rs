//! `--state` files read: their objects each kept once, with what their snapshots recorded, for
//! an offline check or plan; or handed document by document to the cluster views' collector.

use std::collections::BTreeSet;

use kubectl_quota_engine::capacity::{Collector, Duplicates};
use kubectl_quota_engine::objects;

use super::{for_each_document, is_url, load_each, recorded_in, Recorded};
use crate::error::Fatal;

/// The state of an offline command (`--state`): the objects, and what snapshots recorded.
pub struct State {
    pub objects: Vec<objects::Object>,
    pub recorded: Vec<Recorded>,
    /// The one warning about objects the state holds more than once (each kept once: the
    /// later wins), if any.
    pub duplicates: Option<String>,
}

/// Reads `--state` files: their objects, and what each snapshot among them recorded. An
/// object held twice (the same file given twice, two files with the same quota) is one
/// object, the one read last, as the server holds one object per name.
pub fn load_state(paths: &[String]) -> Result<State, Fatal> {
    let mut objects = Vec::new();
    let recorded = load_each(paths, None, false, true, None, false, |o| objects.push(o))?;
    // An object the server could not store was not read from one (`capacity --state` says the same).
    for o in &objects {
        kubectl_quota_engine::manifest::stored_by_a_server(&o.origin)?;
    }
    let mut duplicates = Duplicates::default();
    let objects = once_each(objects, &mut duplicates);
    Ok(State { objects, recorded, duplicates: duplicates.warning() })
}

/// `objs` with each object (group, kind, namespace, name) kept once, where it was last read;
/// every one dropped is counted in `duplicates`. Objects without a name are all kept.
fn once_each(objs: Vec<objects::Object>, duplicates: &mut Duplicates) -> Vec<objects::Object> {
    let key = |o: &objects::Object| (o.type_info.group.clone(), o.type_info.kind.clone(), o.meta.namespace.clone().unwrap_or_default(), o.meta.name.clone());
    let mut seen = std::collections::HashSet::new();
    let mut keep = vec![true; objs.len()];
    for (i, o) in objs.iter().enumerate().rev() {
        if o.meta.name.is_empty() {
            continue;
        }
        if !seen.insert(key(o)) {
            keep[i] = false;
            duplicates.add(|| match o.meta.namespace.as_deref() {
                Some(ns) if o.type_info.namespaced => format!("{} {ns}/{}", o.type_info.kind, o.meta.name),
                _ => format!("{} {}", o.type_info.kind, o.meta.name),
            });
        }
    }
    let mut keep = keep.into_iter();
    objs.into_iter().filter(|_| keep.next().unwrap_or(true)).collect()
}

/// `paths` with a file given more than once (the same file, however spelled) read once:
/// the paths kept, and one warning naming those given twice.
fn files_once(paths: &[String]) -> (Vec<String>, Option<String>) {
    let mut seen = BTreeSet::new();
    let mut kept = Vec::new();
    let mut twice = Vec::new();
    for p in paths {
        let same = if p == "-" || is_url(p) { None } else { std::fs::canonicalize(p).ok().filter(|c| c.is_file()) };
        match same {
            Some(c) if !seen.insert(c.clone()) => twice.push(p.clone()),
            _ => kept.push(p.clone()),
        }
    }
    let warning = (!twice.is_empty()).then(|| format!("--state names the same file more than once, read once: {}", twice.join(", ")));
    (kept, warning)
}

/// Reads `--state` files for the cluster views (`capacity`, `uncovered`, `blocked`): every
/// document is handed to the engine's collector as soon as it is read, which keeps only
/// per-namespace sums. Every document's error is reported, as for
/// [`for_each_object`](super::for_each_object); the kinds a snapshot records it could not
/// read become notes.
pub fn collect_state(paths: &[String], collector: &mut Collector) -> Result<(), Fatal> {
    let mut errors = Vec::new();
    let mut recorded = Vec::new();
    // A file given twice would count its pods twice: it is read once.
    let (paths, twice) = files_once(paths);
    collector.warnings.extend(twice);
    for_each_document(
        &paths,
        None,
        false,
        |d| {
            if let Err(e) = collector.add(&d) {
                errors.push(e.to_string());
            }
            Ok(())
        },
        |file, text| recorded.extend(recorded_in(file, text)),
    )?;
    if !errors.is_empty() {
        return Err(Fatal::input(errors.join("\nerror: ")));
    }
    // Workloads read before the autoscaler that targets them: read again, only those kept.
    if collector.scale_targets && !collector.unread_scale_targets().is_empty() {
        for_each_document(
            &paths,
            None,
            false,
            |d| {
                collector.add_scale_target(&d);
                Ok(())
            },
            |_, _| {},
        )?;
    }
    for r in recorded {
        // A snapshot of every namespace saved every kind the views read, but those it says
        // it could not: none of a kind there means none in the cluster.
        // One of a namespace read that namespace's kinds alike.
        if r.server_version.is_some() {
            let kinds: &[&str] = if r.namespace.is_none() {
                &["Node", "Namespace", "Pod", "Event", "ResourceQuota", "Deployment", "ReplicaSet"]
            } else {
                &["Pod", "Event", "ResourceQuota", "Deployment", "ReplicaSet"]
            };
            for kind in kinds {
                if !r.not_read.iter().any(|n| n.starts_with(&format!("{}s.", kind.to_lowercase()))) {
                    collector.mark_read(kind);
                }
            }
        }
        // Only what the views read is a gap for them (PriorityClasses, say, are not).
        const READ_BY_VIEWS: &[&str] = &[
            "nodes.",
            "namespaces.",
            "pods.",
            "events.",
            "resourcequotas.",
            "resourceslices.",
            "deviceclasses.",
            "deployments.",
            "replicasets.",
            "jobs.",
            "statefulsets.",
            "daemonsets.",
            "replicationcontrollers.",
        ];
        for kind in r.not_read.iter().filter(|k| READ_BY_VIEWS.iter().any(|p| k.starts_with(p))) {
            collector.note(format!("{}: the snapshot could not read {kind}", r.file));
        }
    }
    Ok(())
}
