//! Reading what the user points at: manifest files, directories and standard input, state
//! files and the admission configuration, handed to the engine as text.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, OnceLock};

use kubectl_quota_engine::admission::LimitedResource;
use kubectl_quota_engine::capacity::{Collector, Duplicates};
use kubectl_quota_engine::check::{ClusterState, Gap, Lacking};
use kubectl_quota_engine::manifest::{parse_each, Document, InputError};
use kubectl_quota_engine::version::{KubeVersion, Rules, NEWEST, OLDEST};
use kubectl_quota_engine::{admission_config, objects};

use crate::error::Fatal;

mod kustomize;
mod url;

use kustomize::{kustomize_build, resource_id};
pub use url::{is_url, read_url};

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

/// The most bytes read from any one input (manifest, standard input, `--state`,
/// `--admission-config`, a kubeconfig's token file) and from any one API response: 64 MiB,
/// or `KUBECTL_QUOTA_MAX_INPUT_BYTES`. Reading stops there with an error, so `/dev/zero` or an
/// endless stream ends quickly instead of filling memory.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 << 20;

/// The cap in force (see [`DEFAULT_MAX_INPUT_BYTES`]).
pub fn max_input_bytes() -> u64 {
    static CAP: OnceLock<u64> = OnceLock::new();
    *CAP.get_or_init(|| {
        std::env::var("KUBECTL_QUOTA_MAX_INPUT_BYTES").ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(DEFAULT_MAX_INPUT_BYTES)
    })
}

/// Reads at most the cap from `r` and decodes it as text: UTF-8 with or without a byte-order
/// mark, or UTF-16 with one (kubectl accepts both).
pub fn read_capped(mut r: impl Read, what: &str) -> Result<String, String> {
    let cap = max_input_bytes();
    let mut bytes = Vec::new();
    r.by_ref().take(cap + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {what}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("{what} is larger than {cap} bytes (set KUBECTL_QUOTA_MAX_INPUT_BYTES to allow more)"));
    }
    decode_text(bytes).map_err(|e| format!("cannot read {what}: {e}"))
}

/// Text from bytes: a UTF-16 byte-order mark selects UTF-16; otherwise UTF-8 (a UTF-8 mark is
/// dropped by the manifest parser).
pub fn decode_text(bytes: Vec<u8>) -> Result<String, String> {
    let utf16 = |le: bool| -> Result<String, String> {
        let body = &bytes[2..];
        if !body.len().is_multiple_of(2) {
            return Err("UTF-16 text with an odd number of bytes".into());
        }
        let units = body.chunks_exact(2).map(|c| if le { u16::from_le_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], c[1]]) });
        char::decode_utf16(units).collect::<Result<String, _>>().map_err(|e| format!("invalid UTF-16: {e}"))
    };
    match bytes.get(..2) {
        Some([0xFF, 0xFE]) => utf16(true),
        Some([0xFE, 0xFF]) => utf16(false),
        _ => String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}")),
    }
}

/// Reads a file through [`read_capped`].
pub fn read_file(path: &Path) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    read_capped(f, "the file").map_err(|e| e.replace("the file is larger", "larger").replace("cannot read the file: ", "cannot read: "))
}

/// File names a directory contributes: `.yaml`, `.yml` and `.json`, sorted.
fn manifest_files_in(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| InputError::file(&shown, format!("cannot read directory: {e}")))?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| InputError::file(&shown, format!("cannot read directory: {e}")))?;
        paths.push(entry.path());
    }
    paths.sort();
    for p in paths {
        // kubectl does not follow links to directories when walking: two links to `.` would
        // otherwise walk without end.
        let is_link = std::fs::symlink_metadata(&p).map(|m| m.file_type().is_symlink()).unwrap_or(false);
        if p.is_dir() {
            if is_link {
                continue;
            }
            if recursive {
                manifest_files_in(&p, recursive, out)?;
            }
        } else if p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
            // Regular files only (a link to one too): a FIFO, socket or device named `x.yaml`
            // in a walked directory would block the read or never end. One named on its own
            // (`-f <(helm template ...)`) is still read.
            out.push(p);
        }
    }
    Ok(())
}

/// Reads every path (`-` is stdin; a URL is fetched; a directory contributes its manifest files
/// in name order), then the kustomization's build, and hands each document to `each` in order,
/// as soon as it is read. Each file's text goes to `text_of` once its documents are read.
fn for_each_document<S: AsRef<str>>(
    paths: &[S],
    kustomization: Option<&str>,
    recursive: bool,
    mut each: impl FnMut(Document) -> Result<(), InputError>,
    mut text_of: impl FnMut(&str, &str),
) -> Result<(), InputError> {
    for p in paths {
        let p = p.as_ref();
        if p == "-" {
            let text = read_capped(std::io::stdin().lock(), "standard input").map_err(|e| InputError::file("-", e))?;
            parse_each("-", &text, &mut each)?;
            text_of("-", &text);
            continue;
        }
        if is_url(p) {
            let text = read_url(p).map_err(|e| InputError::file(p, e))?;
            parse_each(p, &text, &mut each)?;
            text_of(p, &text);
            continue;
        }
        let path = Path::new(p);
        let meta = std::fs::metadata(path).map_err(|e| InputError::file(p, format!("cannot read: {e}")))?;
        let files = if meta.is_dir() {
            let mut files = Vec::new();
            manifest_files_in(path, recursive, &mut files)?;
            if files.is_empty() {
                return Err(InputError::file(p, "directory holds no .yaml, .yml or .json files"));
            }
            files
        } else {
            vec![path.to_path_buf()]
        };
        for f in files {
            let shown = f.display().to_string();
            let text = read_file(&f).map_err(|e| InputError::file(&shown, e))?;
            parse_each(&shown, &text, &mut each)?;
            text_of(&shown, &text);
        }
    }
    if let Some(dir) = kustomization {
        let (file, text) = kustomize_build(dir)?;
        // The build's documents are numbered in its output, which its author never sees: each
        // is named by its resource id in the kustomization instead.
        parse_each(&file, &text, |mut d| {
            d.origin.line = None;
            d.origin.id = Some(resource_id(&d.value));
            each(d)
        })?;
        text_of(&file, &text);
    }
    Ok(())
}

/// Objects decoded one document at a time, with every document's error kept.
#[derive(Default)]
/// Decodes documents, handing each object to `each` and keeping every error.
struct Decoder<F> {
    each: F,
    errors: Vec<String>,
}

impl<F: FnMut(objects::Object)> Decoder<F> {
    fn add(&mut self, d: &Document) {
        match objects::decode(d) {
            Ok(o) => (self.each)(o),
            Err(e) => self.errors.push(e.to_string()),
        }
    }

    fn finish(self) -> Result<(), Fatal> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Fatal::input(self.errors.join("\nerror: ")))
        }
    }
}

/// Reads and decodes every path: each document is decoded as soon as it is read and its JSON
/// dropped, so a large input is held only as the (much smaller) decoded objects. Every
/// document's decoding error is reported, not just the first.
///
/// Reading (the YAML parse) runs on a second thread, a few documents ahead of decoding on
/// this one: the two take about the same time, and nothing else runs before the check.
pub fn load_objects<S: AsRef<str> + Sync>(paths: &[S], recursive: bool) -> Result<Vec<objects::Object>, Fatal> {
    let mut objects = Vec::new();
    load_each(paths, None, recursive, false, |o| objects.push(o))?;
    Ok(objects)
}

/// [`load_objects`], each object handed to `each` as soon as it is decoded, so that none has
/// to be held (`describe --state` keeps only what it shows of a quota). Every decoding error
/// is still reported, once everything is read.
pub fn for_each_object<S: AsRef<str> + Sync>(paths: &[S], recursive: bool, each: impl FnMut(objects::Object)) -> Result<(), Fatal> {
    load_each(paths, None, recursive, false, each).map(|_| ())
}

/// [`for_each_object`], and what `kubectl quota snapshot` recorded in each file read (see
/// [`Recorded`]).
fn load_each<S: AsRef<str> + Sync>(
    paths: &[S],
    kustomization: Option<&str>,
    recursive: bool,
    recorded: bool,
    each: impl FnMut(objects::Object),
) -> Result<Vec<Recorded>, Fatal> {
    let mut decoder = Decoder { each, errors: Vec::new() };
    let mut found = Vec::new();
    let record = |found: &mut Vec<Recorded>, file: &str, text: &str| {
        if recorded {
            found.extend(recorded_in(file, text));
        }
    };
    std::thread::scope(|scope| {
        let (send, receive) = mpsc::sync_channel::<Vec<Document>>(CHUNKS_AHEAD);
        let reader = std::thread::Builder::new().name("reader".into()).stack_size(READER_STACK).spawn_scoped(scope, move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            let mut found = Vec::new();
            for_each_document(
                paths,
                kustomization,
                recursive,
                |d| {
                    chunk.push(d);
                    if chunk.len() == CHUNK {
                        // The decoder stops receiving only once this thread has ended.
                        let _ = send.send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)));
                    }
                    Ok(())
                },
                |file, text| record(&mut found, file, text),
            )?;
            let _ = send.send(chunk);
            Ok::<Vec<Recorded>, InputError>(found)
        });
        let Ok(reader) = reader else {
            // No second thread to be had: read here.
            return for_each_document(
                paths,
                kustomization,
                recursive,
                |d| {
                    decoder.add(&d);
                    Ok(())
                },
                |file, text| record(&mut found, file, text),
            );
        };
        for chunk in receive {
            chunk.iter().for_each(|d| decoder.add(d));
        }
        match reader.join() {
            Ok(read) => {
                found = read?;
                Ok(())
            }
            // Reading only parses; a panic there is a bug, and shows as one.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })?;
    decoder.finish()?;
    Ok(found)
}

/// The reading thread's stack: the main thread's usual 8 MiB, as the parsers' recursion
/// (bounded by their depth limits) was measured on it; a spawned thread's 2 MiB default is
/// too small for it in a debug build.
const READER_STACK: usize = 8 << 20;

/// Documents handed from the reading thread to the decoding one at a time.
const CHUNK: usize = 16;
/// How many chunks the reader may be ahead.
const CHUNKS_AHEAD: usize = 4;

/// The manifests a command acts on: `-f` paths and URLs, then a kustomization's build (`-k`),
/// decoded: at least one object, or an error.
pub fn load_manifests(paths: &[String], kustomization: Option<&str>, recursive: bool) -> Result<Vec<objects::Object>, Fatal> {
    let mut objs = Vec::new();
    load_each(paths, kustomization, recursive, false, |o| objs.push(o))?;
    if objs.is_empty() {
        let mut named: Vec<&str> = paths.iter().map(String::as_str).collect();
        named.extend(kustomization);
        return Err(Fatal::input(format!("no objects found in {}", named.join(", "))));
    }
    Ok(objs)
}

/// The `limitedResources` of an admission configuration file (none without one).
pub fn load_limited(path: Option<&str>) -> Result<Vec<LimitedResource>, Fatal> {
    match path {
        Some(path) => {
            let text = read_file(Path::new(path)).map_err(|e| Fatal::input(format!("{path}: {e}")))?;
            Ok(admission_config::parse_with(path, &text, &|p| read_file(Path::new(p)).map_err(|e| format!("{p}: {e}")))?)
        }
        None => Ok(vec![]),
    }
}

/// The PodSecurity plugin's configuration in an admission configuration file (`None` without
/// a file, or when the file configures no PodSecurity: the server then runs upstream's
/// defaults).
pub fn load_pod_security(path: Option<&str>) -> Result<Option<kubectl_quota_engine::admission::pod_security::Config>, Fatal> {
    let Some(path) = path else { return Ok(None) };
    let text = read_file(Path::new(path)).map_err(|e| Fatal::input(format!("{path}: {e}")))?;
    Ok(admission_config::parse_pod_security_with(path, &text, &|p| read_file(Path::new(p)).map_err(|e| format!("{p}: {e}")))?)
}

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
    let recorded = load_each(paths, None, false, true, |o| objects.push(o))?;
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
/// per-namespace sums. Every document's error is reported, as for [`for_each_object`]; the
/// kinds a snapshot records it could not read become notes.
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

/// What the snapshots of one file recorded (nothing for a file `snapshot` did not write).
///
/// The engine's reader hands on a List's items only, so the List's own annotations are read
/// here, from the text: only when the annotations' prefix occurs in it at all, and then only
/// the head of a List as `snapshot` writes it (everything before its top-level `items:`),
/// or, for any other layout, the whole text again.
fn recorded_in(file: &str, text: &str) -> Vec<Recorded> {
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
        (None, None) => (Rules::newest(), "default", None),
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
    for kind in Lacking::ALL {
        let resource = kind.resource();
        if recorded.iter().any(|r| r.not_read.iter().any(|k| k == resource)) {
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
    let read = !recorded.iter().any(|r| r.not_read.iter().any(|k| k == "namespaces.core"));
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

/// What an offline check answers without a kind the snapshot could not read; `None` for an
/// API the release does not serve (nothing to miss).
fn not_read_note(file: &str, kind: &str, rules: &Rules) -> Option<String> {
    let (what, consequence) = match kind {
        "priorityclasses.scheduling.k8s.io" => (
            "PriorityClasses",
            "the global default PriorityClass is not given to pods that name no class (so priority-class scopes see them classless), and unknown class names are not refused",
        ),
        "storageclasses.storage.k8s.io" => ("StorageClasses", "the default StorageClass is not given to claims without a class"),
        "namespaces.core" => ("Namespaces", "whether a namespace exists, and its admin-access label, are not checked"),
        "runtimeclasses.node.k8s.io" => ("RuntimeClasses", "RuntimeClass overhead is not added to pods"),
        "serviceaccounts.core" => ("ServiceAccounts", "a pod naming one that does not exist is not refused"),
        "deviceclasses.resource.k8s.io" if !rules.dra => return None,
        "deviceclasses.resource.k8s.io" => ("DeviceClasses", "DRA extended resource names are not resolved"),
        "resourceclaimtemplates.resource.k8s.io" if !rules.dra => return None,
        "resourceclaimtemplates.resource.k8s.io" => ("ResourceClaimTemplates", "claims that pods create from templates are not checked"),
        // Read for the cluster views only (capacity, blocked): a check never consults them.
        "nodes.core" | "events.core" | "resourceslices.resource.k8s.io" => return None,
        other => (other, "the check answers without them"),
    };
    Some(format!("{what} could not be read when the snapshot {file} was taken: {consequence}"))
}
