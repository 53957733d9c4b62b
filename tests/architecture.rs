//! ARCHITECTURE.md's import table, checked against the code: every `crate::` path in
//! `engine/src` and `src` must be an arrow the table allows, and every part must have a row.
//!
//! A part is a top-level module (`engine/src/check.rs` and everything under `engine/src/check/`
//! is `check`), except in the engine's admission chain, where each plugin (a file or folder
//! under `engine/src/admission/`) is a part of its own (`admission/limit_ranger`) and
//! `admission/mod.rs` is the chain, `admission`; in the plugin, each file under `src/commands/`
//! is a part of its own (`commands/check`), and `commands/*` is the row for all of them unless
//! one has its own row.
//! The plugin's use of the engine crate is the arrow `engine`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::root;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Side {
    Engine,
    Plugin,
}

/// The names between backticks in a table cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The table's rows: (side, part) -> the parts it may import.
fn allowed() -> BTreeMap<(Side, String), BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("## What each part may import").expect("ARCHITECTURE.md has the import table");
    let mut rows = BTreeMap::new();
    for line in text[start..].lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 3 || cells[0] == "part" || cells[0].starts_with("---") {
            continue;
        }
        let side = if cells[0].starts_with("plugin") { Side::Plugin } else { Side::Engine };
        let may: BTreeSet<String> = ticked(cells[2]).into_iter().collect();
        for part in ticked(cells[0]) {
            rows.insert((side, part), may.clone());
        }
    }
    assert!(rows.len() > 20, "the import table was not found whole: {rows:?}");
    rows
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The part a source file belongs to; `None` for the crate roots.
fn part_of(side: Side, rel: &Path) -> Option<String> {
    let parts: Vec<String> = rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
    match (side, parts.as_slice()) {
        (_, [root]) if root == "lib" || root == "main" => None,
        (Side::Plugin, [dir, name]) if dir == "commands" && name == "mod" => None,
        (Side::Plugin, [dir, name, ..]) if dir == "commands" => Some(format!("commands/{name}")),
        (Side::Engine, [dir, name]) if dir == "admission" && CHAIN_FILES.contains(&name.as_str()) => Some("admission".into()),
        (Side::Engine, [dir, name, ..]) if dir == "admission" => Some(format!("admission/{name}")),
        (_, [first, ..]) => Some(first.clone()),
        _ => None,
    }
}

/// The chain's own files under `engine/src/admission/` (the part `admission`): the chain, and
/// the plugins adapted to its shape.
const CHAIN_FILES: &[&str] = &["mod", "adapters"];

/// The engine's admission plugins: each a part of its own (`admission/<name>`), named by the
/// files and folders under `engine/src/admission/`.
const ADMISSION_PLUGINS: &[&str] = &[
    "namespace_lifecycle",
    "limit_ranger",
    "service_account",
    "pod_security",
    "priority",
    "default_storage_class",
    "pvc_resize",
    "runtime_class",
    "policy",
    "vpa_webhook",
    "resource_quota",
    // Not a plugin: who answers a request, in the server's order (the chain's and quota's
    // refusals name it), a leaf any part of the chain may import.
    "stage",
];

/// The parts a file's code names through `crate::` (comments left out), and `engine` for the
/// plugin's uses of the engine crate.
fn imports(side: Side, part: &str, code: &str) -> BTreeSet<String> {
    let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `kubectl_quota_engine::`, not `crate::`
        }
        let rest = &code[i + "crate::".len()..];
        // In the engine, `crate::admission::<plugin>` is that plugin's part.
        if let Some(after) = rest.strip_prefix("admission::").filter(|_| side == Side::Engine) {
            let name = ident(after);
            if ADMISSION_PLUGINS.contains(&name.as_str()) {
                out.insert(format!("admission/{name}"));
                continue;
            }
        }
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|s| ident(s.trim())).filter(|s| !s.is_empty()));
        } else {
            out.insert(ident(rest));
        }
    }
    if side == Side::Plugin {
        if out.remove("commands") {
            for (i, _) in code.match_indices("commands::") {
                let rest = &code[i + "commands::".len()..];
                let names: Vec<String> = match rest.strip_prefix('{') {
                    Some(group) => group[..group.find('}').unwrap_or(group.len())].split(',').map(|s| ident(s.trim())).collect(),
                    None => vec![ident(rest)],
                };
                out.extend(names.into_iter().filter(|n| !n.is_empty() && n != "self").map(|n| format!("commands/{n}")));
            }
        }
        if code.contains("kubectl_quota_engine") {
            out.insert("engine".into());
        }
        // In a subcommand's file, `super::x` is the subcommand (or shared module) `x`.
        if part.starts_with("commands/") {
            for (i, _) in code.match_indices("super::") {
                let name = ident(&code[i + "super::".len()..]);
                if !name.is_empty() {
                    out.insert(format!("commands/{name}"));
                }
            }
        }
    }
    out
}

fn row<'a>(rows: &'a BTreeMap<(Side, String), BTreeSet<String>>, side: Side, part: &str) -> Option<&'a BTreeSet<String>> {
    rows.get(&(side, part.to_string())).or_else(|| part.strip_prefix("commands/").and_then(|_| rows.get(&(side, "commands/*".to_string()))))
}

fn permits(may: &BTreeSet<String>, to: &str) -> bool {
    may.contains(to) || (to.starts_with("commands/") && may.contains("commands/*"))
}

#[test]
fn every_import_is_an_arrow_the_architecture_table_allows() {
    let rows = allowed();
    let root = root();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for (side, dir) in [(Side::Engine, root.join("engine/src")), (Side::Plugin, root.join("src"))] {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in files {
            let Some(part) = part_of(side, f.strip_prefix(&dir).unwrap()) else { continue };
            seen.insert((side, part.clone()));
            let Some(may) = row(&rows, side, &part) else {
                wrong.push(format!("{}: part `{part}` has no row in ARCHITECTURE.md's import table", f.display()));
                continue;
            };
            for to in imports(side, &part, &std::fs::read_to_string(&f).unwrap()) {
                if to != part && !permits(may, &to) {
                    wrong.push(format!("{}: `{part}` imports `{to}`, which its row does not allow", f.display()));
                }
            }
        }
    }
    for (side, part) in rows.keys() {
        if part != "commands/*" && !seen.contains(&(*side, part.clone())) {
            wrong.push(format!("ARCHITECTURE.md names `{part}` ({side:?}), which is not in the code"));
        }
    }
    assert!(wrong.is_empty(), "the code and ARCHITECTURE.md disagree:\n{}", wrong.join("\n"));
}

#[test]
fn every_admission_plugin_is_a_part() {
    let mut found = BTreeSet::new();
    for e in std::fs::read_dir(root().join("engine/src/admission")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if !CHAIN_FILES.contains(&name.as_str()) {
            found.insert(name);
        }
    }
    assert_eq!(found, ADMISSION_PLUGINS.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>());
}

#[test]
fn the_import_reader_sees_paths_groups_and_the_engine() {
    let cases: &[(Side, &str, &[&str])] = &[
        (Side::Engine, "use crate::objects::{Pod, Object};\nlet x = crate::dra::pod_claims(p);", &["dra", "objects"]),
        (Side::Engine, "use crate::admission::limit_ranger::validate_pod;\nuse crate::admission::{Decision, usage};", &["admission", "admission/limit_ranger"]),
        (Side::Engine, "use crate::{quantity, resources::ResourceList};", &["quantity", "resources"]),
        (Side::Engine, "// see crate::check\n/// [`crate::report`]\nfn f() {}", &[]),
        (Side::Plugin, "use kubectl_quota_engine::check::Report;", &["engine"]),
        (Side::Plugin, "use crate::commands::{self};\ncommands::check::run()", &["commands/check"]),
        (Side::Plugin, "use super::views::{self, ViewOutput};", &["commands/views"]),
    ];
    for (side, code, want) in cases {
        let got: Vec<String> = imports(*side, "commands/x", code).into_iter().collect();
        assert_eq!(got, want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{code}");
    }
}

/// The plugin's readers of cluster data take every kind a check lists or the guard watches from
/// the table of cluster-data kinds (engine/src/check/cluster_kinds.rs): none of them names one
/// by its plural, so a new kind is a row there, not one more line in each reader. (The
/// workloads are named where they are judged, not as data read.)
#[test]
fn the_readers_of_cluster_data_name_no_kind_of_their_own() {
    use kubectl_quota_engine::check::cluster_kinds::{listed, watched};
    let readers = ["src/live/state.rs", "src/live/snapshot.rs", "src/guard/mod.rs", "src/guard/install.rs", "src/input/recorded.rs"];
    for file in readers {
        let text = std::fs::read_to_string(common::root().join(file)).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for k in listed().chain(watched()) {
            for literal in [format!("\"{}\"", k.plural), format!("\"{}.", k.plural)] {
                assert!(!code.contains(&literal), "{file} names {} ({literal}): take it from the table", k.kind);
            }
        }
    }
}
