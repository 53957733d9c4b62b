//! Reading what the user points at: manifest files, directories and standard input, state
//! files and the admission configuration, handed to the engine as text.

use std::io::Read;
use std::path::{Path, PathBuf};

use kubectl_quota_engine::admission::LimitedResource;
use kubectl_quota_engine::manifest::{parse_str, Document, InputError};
use kubectl_quota_engine::{admission_config, objects};

use crate::error::Fatal;

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
        if p.is_dir() {
            if recursive {
                manifest_files_in(&p, recursive, out)?;
            }
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads every path (`-` is stdin; a directory contributes its manifest files in name order)
/// and returns all documents in order.
pub fn load_paths<S: AsRef<str>>(paths: &[S], recursive: bool) -> Result<Vec<Document>, InputError> {
    let mut docs = Vec::new();
    for p in paths {
        let p = p.as_ref();
        if p == "-" {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| InputError::file("-", format!("cannot read standard input: {e}")))?;
            docs.extend(parse_str("-", &text)?);
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
            let text = std::fs::read_to_string(&f).map_err(|e| InputError::file(&shown, format!("cannot read: {e}")))?;
            docs.extend(parse_str(&shown, &text)?);
        }
    }
    Ok(docs)
}

/// Decodes documents into objects; every document's error is reported, not just the first.
pub fn decode_all(docs: &[Document]) -> Result<Vec<objects::Object>, Fatal> {
    let mut objs = Vec::new();
    let mut errors = Vec::new();
    for d in docs {
        match objects::decode(d) {
            Ok(o) => objs.push(o),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty() {
        Ok(objs)
    } else {
        Err(Fatal::input(errors.join("\nerror: ")))
    }
}

/// The `limitedResources` of an admission configuration file (none without one).
pub fn load_limited(path: Option<&str>) -> Result<Vec<LimitedResource>, Fatal> {
    match path {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Fatal::input(format!("{path}: cannot read: {e}")))?;
            Ok(admission_config::parse_with(path, &text, &|p| std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}")))?)
        }
        None => Ok(vec![]),
    }
}
