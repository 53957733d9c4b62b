//! Reading what the user points at: manifest files, directories and standard input, state
//! files and the admission configuration, handed to the engine as text.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, OnceLock};

use kubectl_quota_engine::admission::LimitedResource;
use kubectl_quota_engine::manifest::{parse_each, Document, InputError};
use kubectl_quota_engine::{admission_config, objects};

use crate::error::Fatal;

mod kustomize;
mod recorded;
mod state;
mod url;

use kustomize::{kustomize_build, resource_id};
use recorded::recorded_in;
pub use recorded::{
    kinds_known, namespaces_known, offline_rules, NamespacesKnown, OfflineRules, Recorded, NAMESPACE_ANNOTATION, NOT_READ_ANNOTATION, SERVER_VERSION_ANNOTATION,
};
pub use state::{collect_state, load_state, State};
pub use url::{is_url, read_url};

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
pub fn read_capped(r: impl Read, what: &str) -> Result<String, String> {
    read_capped_sized(r, what, 0)
}

/// [`read_capped`] into a buffer first sized for `size` bytes (a file's length; at most the
/// cap), so that a large file is read without copying the buffer each time it doubles.
fn read_capped_sized(mut r: impl Read, what: &str, size: u64) -> Result<String, String> {
    let cap = max_input_bytes();
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(cap + 1)).unwrap_or(0));
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
    let size = f.metadata().map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    read_capped_sized(f, "the file", size).map_err(|e| e.replace("the file is larger", "larger").replace("cannot read the file: ", "cannot read: "))
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

/// Decodes documents, handing each object to `each` and keeping every error (and, when
/// asked, the Pod each document leads to, as JSON: see [`PodsToSend`]).
struct Decoder<'p, F> {
    each: F,
    errors: Vec<String>,
    pods: Option<&'p mut PodsToSend>,
    /// Keep each pod's spec as written (admission policies will read it).
    pod_specs: bool,
}

/// The Pod each document leads to (a Pod, a workload's template), as compact JSON, by the
/// document: what a live check may send the server to dry-run (a decoded object no longer
/// holds every field).
pub type PodsToSend = std::collections::BTreeMap<kubectl_quota_engine::check::dry_run::PodSource, String>;

impl<F: FnMut(objects::Object)> Decoder<'_, F> {
    /// Decodes `d`; keeps its pod spec's JSON in the object (moved: the admission policies
    /// read the whole pod) and, for a live check, the Pod it leads to as JSON.
    fn add(&mut self, d: Document) {
        match objects::decode(&d) {
            Ok(mut o) => {
                if let Some(pods) = self.pods.as_deref_mut().filter(|_| !o.meta.too_large) {
                    use kubectl_quota_engine::check::dry_run::{pod_to_send, source_of};
                    if let Some(json) = pod_to_send(&d.value, &o).and_then(|v| serde_json::to_string(&v).ok()) {
                        pods.insert(source_of(&o.origin), json);
                    }
                }
                objects::keep_source(&mut o, d.value, self.pod_specs);
                (self.each)(o)
            }
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
    load_each(paths, None, recursive, false, None, false, |o| objects.push(o))?;
    Ok(objects)
}

/// [`load_objects`], each object handed to `each` as soon as it is decoded, so that none has
/// to be held (`describe --state` keeps only what it shows of a quota). Every decoding error
/// is still reported, once everything is read.
pub fn for_each_object<S: AsRef<str> + Sync>(paths: &[S], recursive: bool, each: impl FnMut(objects::Object)) -> Result<(), Fatal> {
    load_each(paths, None, recursive, false, None, false, each).map(|_| ())
}

/// [`for_each_object`], and what `kubectl quota snapshot` recorded in each file read (see
/// [`Recorded`]).
fn load_each<S: AsRef<str> + Sync>(
    paths: &[S],
    kustomization: Option<&str>,
    recursive: bool,
    recorded: bool,
    pods: Option<&mut PodsToSend>,
    pod_specs: bool,
    each: impl FnMut(objects::Object),
) -> Result<Vec<Recorded>, Fatal> {
    let mut decoder = Decoder { each, errors: Vec::new(), pods, pod_specs };
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
                    decoder.add(d);
                    Ok(())
                },
                |file, text| record(&mut found, file, text),
            );
        };
        for chunk in receive {
            chunk.into_iter().for_each(|d| decoder.add(d));
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
    load_manifests_keeping(paths, kustomization, recursive, None, false)
}

/// [`load_manifests`], keeping in `pods` the Pod each document leads to (a live check's dry
/// runs).
pub fn load_manifests_keeping(
    paths: &[String],
    kustomization: Option<&str>,
    recursive: bool,
    pods: Option<&mut PodsToSend>,
    pod_specs: bool,
) -> Result<Vec<objects::Object>, Fatal> {
    let mut objs = Vec::new();
    load_each(paths, kustomization, recursive, false, pods, pod_specs, |o| objs.push(o))?;
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
