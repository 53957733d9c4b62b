//! krew-manifest.yaml against the rules krew-index applies to a plugin manifest
//! (kubernetes-sigs/krew: internal/index/validation/validate.go and
//! cmd/validate-krew-manifest/main.go), plus this project's own release rules: the six
//! platforms, the version of Cargo.toml, and archives named as scripts/release.sh names them.
//!
//! A sha256 of 64 zeros is accepted, explicitly, as the "unreleased" placeholder, and only on
//! a line marked `# unreleased`: scripts/release.sh writes the real sums.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use common::root;
use serde::Deserialize;

const MANIFEST: &str = "krew-manifest.yaml";
const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
const PLUGIN_NAME: &str = "quota";
const BIN: &str = "kubectl-quota";
const COMPLETION: &str = "kubectl_complete-quota";
const COMPLETION_SRC: &str = "completions/kubectl_complete-quota";
const UNRELEASED_SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const EMPTY_FILE_SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The release platforms: krew os, krew arch, Rust target, archive extension, bin.
const PLATFORMS: [(&str, &str, &str, &str, &str); 6] = [
    ("linux", "amd64", "x86_64-unknown-linux-musl", "tar.gz", "kubectl-quota"),
    ("linux", "arm64", "aarch64-unknown-linux-musl", "tar.gz", "kubectl-quota"),
    ("darwin", "amd64", "x86_64-apple-darwin", "tar.gz", "kubectl-quota"),
    ("darwin", "arm64", "aarch64-apple-darwin", "tar.gz", "kubectl-quota"),
    ("windows", "amd64", "x86_64-pc-windows-msvc", "zip", "kubectl-quota.exe"),
    ("windows", "arm64", "aarch64-pc-windows-msvc", "zip", "kubectl-quota.exe"),
];

/// The os/arch pairs krew accepts (cmd/validate-krew-manifest: `osArchPairs`).
const KREW_SUPPORTED: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

const WINDOWS_RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7",
    "LPT8", "LPT9",
];

// --- the manifest, as krew reads it (unknown fields are typos: refused) --------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Plugin {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    version: String,
    #[serde(default)]
    homepage: String,
    #[serde(default)]
    short_description: String,
    #[serde(default)]
    description: String,
    #[allow(dead_code)]
    caveats: Option<String>,
    #[serde(default)]
    platforms: Vec<Platform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    selector: Option<Selector>,
    #[serde(default)]
    uri: String,
    #[serde(default)]
    sha256: String,
    files: Option<Vec<FileOperation>>,
    #[serde(default)]
    bin: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Selector {
    match_labels: Option<BTreeMap<String, String>>,
    match_expressions: Option<Vec<Requirement>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Requirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

fn manifest_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| std::fs::read_to_string(root().join(MANIFEST)).unwrap_or_else(|e| panic!("reading {MANIFEST}: {e}")))
}

fn manifest() -> &'static Plugin {
    static PLUGIN: OnceLock<Plugin> = OnceLock::new();
    PLUGIN.get_or_init(|| serde_saphyr::from_str(manifest_text()).unwrap_or_else(|e| panic!("parsing {MANIFEST}: {e}")))
}

fn tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// "linux/amd64" for error messages; the platform's matchLabels, or its index.
fn label(i: usize, p: &Platform) -> String {
    let labels = p.selector.as_ref().and_then(|s| s.match_labels.as_ref());
    match labels.map(|l| (l.get("os"), l.get("arch"))) {
        Some((Some(os), Some(arch))) => format!("platforms[{i}] {os}/{arch}"),
        _ => format!("platforms[{i}]"),
    }
}

/// The release platform (row of PLATFORMS) the manifest's platform `p` is for.
fn release_platform(i: usize, p: &Platform) -> (&'static str, &'static str, &'static str, &'static str, &'static str) {
    let matched = matched_pairs(p);
    let rows: Vec<_> = PLATFORMS.iter().filter(|(os, arch, ..)| matched.contains(&(os.to_string(), arch.to_string()))).collect();
    match rows.as_slice() {
        [row] => **row,
        _ => panic!("{} does not select exactly one release platform (selects {matched:?})", label(i, p)),
    }
}

// --- rule checkers (tested on bad input below, so a pass means something) ------------------

/// krew: `^[\w-]+$` (Go's \w is ASCII [0-9A-Za-z_]) and not a Windows reserved file name.
fn check_plugin_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!("plugin name {name:?} does not match ^[\\w-]+$"));
    }
    if WINDOWS_RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        return Err(format!("plugin name {name:?} is a reserved file name on Windows"));
    }
    Ok(())
}

/// krew: non-empty, no line break.
fn check_short_description(s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        return Err("shortDescription is empty".into());
    }
    if s.contains(['\r', '\n']) {
        return Err(format!("shortDescription {s:?} has a line break"));
    }
    Ok(())
}

/// krew: a leading `v`, then semver 2.0 (k8s.io/apimachinery ParseSemantic).
fn check_semver_tag(v: &str) -> Result<(), String> {
    let err = |why: &str| Err(format!("version {v:?}: {why}"));
    let Some(rest) = v.strip_prefix('v') else {
        return err("no leading 'v'");
    };
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    let ident = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3 || !parts.iter().all(|p| numeric(p)) {
        return err("not MAJOR.MINOR.PATCH");
    }
    if parts.iter().any(|p| p.len() > 1 && p.starts_with('0')) {
        return err("a leading zero in MAJOR.MINOR.PATCH");
    }
    if let Some(pre) = pre {
        for id in pre.split('.') {
            if !ident(id) || (numeric(id) && id.len() > 1 && id.starts_with('0')) {
                return err("bad pre-release identifier");
            }
        }
    }
    if let Some(build) = build {
        if !build.split('.').all(ident) {
            return err("bad build metadata");
        }
    }
    Ok(())
}

/// krew: `^[a-f0-9]{64}$`.
fn check_sha256(s: &str) -> Result<(), String> {
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(format!("sha256 {s:?} does not match ^[a-f0-9]{{64}}$"))
    }
}

/// krew: non-nil, non-empty selector with only `os` and `arch` keys.
fn check_selector(sel: Option<&Selector>) -> Result<(), String> {
    let sel = sel.ok_or("no selector")?;
    if sel.match_labels.as_ref().is_some_and(|l| l.is_empty()) {
        return Err("matchLabels specified but empty".into());
    }
    if sel.match_expressions.as_ref().is_some_and(|e| e.is_empty()) {
        return Err("matchExpressions specified but empty".into());
    }
    if sel.match_labels.is_none() && sel.match_expressions.is_none() {
        return Err("empty selector".into());
    }
    let keys = sel.match_labels.iter().flat_map(|l| l.keys().cloned());
    let keys = keys.chain(sel.match_expressions.iter().flatten().map(|e| e.key.clone()));
    for key in keys {
        if key != "os" && key != "arch" {
            return Err(format!("selector key {key:?} is not os or arch"));
        }
    }
    Ok(())
}

/// Whether a label selector (matchLabels and matchExpressions, ANDed) selects `labels`.
fn selects(sel: &Selector, labels: &BTreeMap<&str, &str>) -> bool {
    let label_ok = sel.match_labels.iter().flatten().all(|(k, v)| labels.get(k.as_str()) == Some(&v.as_str()));
    let exprs_ok = sel.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(e.key.as_str());
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| e.values.iter().any(|x| x == v)),
            "NotIn" => value.is_none_or(|v| !e.values.iter().any(|x| x == v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            other => panic!("unknown selector operator {other:?}"),
        }
    });
    label_ok && exprs_ok
}

/// The os/arch pairs krew supports that platform `p` selects.
fn matched_pairs(p: &Platform) -> BTreeSet<(String, String)> {
    let Some(sel) = &p.selector else {
        return BTreeSet::new();
    };
    KREW_SUPPORTED
        .iter()
        .filter(|(os, arch)| selects(sel, &BTreeMap::from([("os", *os), ("arch", *arch)])))
        .map(|(os, arch)| (os.to_string(), arch.to_string()))
        .collect()
}

/// validate-krew-manifest's license check on the installed files (case-insensitive).
fn is_license_like(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "license" || n == "license.txt" || n == "license.md" || n.starts_with("licenses") || n.starts_with("copying")
}

/// Go's filepath.Clean(to) == to, for the relative paths a manifest uses.
fn is_clean_relative_path(to: &str) -> bool {
    to == "." || (!to.is_empty() && !to.starts_with('/') && !to.ends_with('/') && to.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != ".."))
}

// --- the checkers catch what they should --------------------------------------------------

#[test]
fn checkers_reject_what_krew_rejects() {
    let cases: Vec<(&str, Result<(), String>)> = vec![
        ("name with a dot", check_plugin_name("quota.v2")),
        ("name with a space", check_plugin_name("my quota")),
        ("empty name", check_plugin_name("")),
        ("reserved name", check_plugin_name("con")),
        ("empty shortDescription", check_short_description("  ")),
        ("two-line shortDescription", check_short_description("a\nb")),
        ("version without v", check_semver_tag("0.1.0")),
        ("two-part version", check_semver_tag("v0.1")),
        ("leading zero", check_semver_tag("v0.01.0")),
        ("empty pre-release", check_semver_tag("v0.1.0-")),
        ("uppercase sha", check_sha256(&"A".repeat(64))),
        ("short sha", check_sha256(&"a".repeat(63))),
        ("missing selector", check_selector(None)),
        (
            "selector key other than os/arch",
            check_selector(Some(&Selector {
                match_labels: Some(BTreeMap::from([("os".into(), "linux".into()), ("libc".into(), "musl".into())])),
                match_expressions: None,
            })),
        ),
        ("empty matchLabels", check_selector(Some(&Selector { match_labels: Some(BTreeMap::new()), match_expressions: None }))),
    ];
    for (what, result) in cases {
        assert!(result.is_err(), "the check accepts {what}");
    }
    for ok in ["v0.1.0", "v1.2.3-rc.1", "v1.2.3+build.5", "v10.20.30-alpha-1.0+x"] {
        check_semver_tag(ok).unwrap();
    }
    assert!(!is_clean_relative_path("./bin") && !is_clean_relative_path("bin/") && is_clean_relative_path("bin"));
    assert!(is_license_like("LICENSE") && is_license_like("COPYING.txt") && !is_license_like("README.md"));
}

#[test]
fn selector_matching_follows_label_selector_semantics() {
    let linux =
        Selector { match_labels: None, match_expressions: Some(vec![Requirement { key: "os".into(), operator: "In".into(), values: vec!["linux".into()] }]) };
    let p = Platform { selector: Some(linux), uri: String::new(), sha256: String::new(), files: None, bin: String::new() };
    assert_eq!(matched_pairs(&p).len(), 5, "os In [linux] selects every linux arch krew supports");
}

// --- the manifest ---------------------------------------------------------------------------

#[test]
fn manifest_parses_with_only_the_fields_krew_knows() {
    manifest();
}

#[test]
fn api_version_and_kind_are_krew_v1alpha2_plugin() {
    assert_eq!(manifest().api_version, API_VERSION);
    assert_eq!(manifest().kind, "Plugin");
}

#[test]
fn plugin_name_matches_krews_pattern_and_is_quota() {
    check_plugin_name(&manifest().metadata.name).unwrap();
    assert_eq!(manifest().metadata.name, PLUGIN_NAME, "krew-index stores it as plugins/{PLUGIN_NAME}.yaml");
}

#[test]
fn short_description_is_one_nonempty_line() {
    check_short_description(&manifest().spec.short_description).unwrap();
}

#[test]
fn description_is_not_empty() {
    assert!(!manifest().spec.description.trim().is_empty());
}

#[test]
fn homepage_is_the_https_github_repository() {
    let homepage = &manifest().spec.homepage;
    assert!(homepage.starts_with("https://github.com/"), "homepage {homepage:?}");
    assert_eq!(homepage.trim_start_matches("https://github.com/").split('/').count(), 2, "homepage {homepage:?} is not owner/repo");
}

#[test]
fn version_is_semver_with_leading_v_and_equals_cargo_version() {
    let version = &manifest().spec.version;
    check_semver_tag(version).unwrap();
    assert_eq!(*version, tag(), "spec.version must be v + Cargo.toml's version (run scripts/release.sh {})", tag());
}

#[test]
fn platforms_cover_exactly_linux_darwin_windows_on_amd64_and_arm64() {
    let mut selected = BTreeSet::new();
    for p in &manifest().spec.platforms {
        selected.extend(matched_pairs(p));
    }
    let wanted: BTreeSet<(String, String)> = PLATFORMS.iter().map(|(os, arch, ..)| (os.to_string(), arch.to_string())).collect();
    assert_eq!(selected, wanted);
    assert_eq!(manifest().spec.platforms.len(), PLATFORMS.len(), "one platform entry per os/arch");
}

#[test]
fn no_two_platforms_match_the_same_os_arch() {
    let mut owner: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let pairs = matched_pairs(p);
        assert!(!pairs.is_empty(), "{} matches no os/arch krew supports", label(i, p));
        for pair in pairs {
            if let Some(j) = owner.insert(pair.clone(), i) {
                panic!("platforms[{j}] and platforms[{i}] both match {}/{}", pair.0, pair.1);
            }
        }
    }
}

#[test]
fn selectors_are_non_empty_and_use_only_os_and_arch_keys() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        check_selector(p.selector.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", label(i, p)));
    }
}

#[test]
fn every_platform_has_uri_sha256_bin_and_files() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let l = label(i, p);
        assert!(!p.uri.is_empty(), "{l}: no uri");
        assert!(!p.sha256.is_empty(), "{l}: no sha256");
        assert!(!p.bin.is_empty(), "{l}: no bin");
        assert!(p.files.as_ref().is_some_and(|f| !f.is_empty()), "{l}: no files (krew's default would copy the whole archive)");
    }
}

#[test]
fn sha256_is_64_lowercase_hex() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        check_sha256(&p.sha256).unwrap_or_else(|e| panic!("{}: {e}", label(i, p)));
    }
}

#[test]
fn sha256_is_zeros_only_on_lines_marked_unreleased() {
    let sums: Vec<&str> = manifest_text().lines().filter(|l| l.trim_start().starts_with("sha256:")).collect();
    assert_eq!(sums.len(), manifest().spec.platforms.len(), "one sha256 line per platform");
    for line in sums {
        let unreleased = line.contains(UNRELEASED_SHA);
        let marked = line.trim_end().ends_with("# unreleased");
        assert_eq!(unreleased, marked, "the zero placeholder and `# unreleased` go together: {line:?}");
    }
}

#[test]
fn sha256_is_never_the_sum_of_an_empty_file() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        assert_ne!(p.sha256, EMPTY_FILE_SHA, "{}: sha256 of an empty file", label(i, p));
    }
}

#[test]
fn files_entries_have_from_and_a_clean_to() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        for f in p.files.iter().flatten() {
            assert!(!f.from.is_empty(), "{}: a files entry without from", label(i, p));
            assert!(is_clean_relative_path(&f.to), "{}: files to {:?} is not a clean relative path", label(i, p), f.to);
        }
    }
}

#[test]
fn every_platform_copies_a_license_file() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let installed = p.files.iter().flatten().map(|f| if f.to == "." { f.from.as_str() } else { f.to.as_str() });
        assert!(installed.into_iter().any(is_license_like), "{}: no LICENSE among the installed files", label(i, p));
        assert!(p.files.iter().flatten().any(|f| f.from == "LICENSE" && f.to == "."), "{}: LICENSE is not copied", label(i, p));
    }
}

#[test]
fn every_platform_copies_the_completion_script() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        assert!(p.files.iter().flatten().any(|f| f.from == COMPLETION && f.to == "."), "{}: {COMPLETION} is not copied", label(i, p));
    }
}

#[test]
fn bin_is_kubectl_quota_exe_on_windows_and_kubectl_quota_elsewhere() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let (os, .., bin) = release_platform(i, p);
        assert_eq!(p.bin, bin, "{}: bin", label(i, p));
        assert_eq!(p.bin.ends_with(".exe"), os == "windows", "{}: krew runs only .exe entrypoints on Windows", label(i, p));
    }
}

#[test]
fn bin_is_copied_into_the_install_root() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        assert!(p.files.iter().flatten().any(|f| f.from == p.bin && f.to == "."), "{}: bin {} is not among the copied files", label(i, p), p.bin);
    }
}

#[test]
fn uri_extension_is_zip_on_windows_and_tar_gz_elsewhere() {
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let (os, _, _, ext, _) = release_platform(i, p);
        assert!(p.uri.ends_with(&format!(".{ext}")), "{}: uri {} is not a .{ext} ({os})", label(i, p), p.uri);
    }
}

#[test]
fn uri_is_the_github_release_download_for_the_version_tag() {
    let tag = tag();
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let (_, _, target, ext, _) = release_platform(i, p);
        let want = format!("{}/releases/download/{tag}/{BIN}-{tag}-{target}.{ext}", manifest().spec.homepage);
        assert!(p.uri.contains(&format!("/{tag}/")), "{}: uri {} is not for {tag}", label(i, p), p.uri);
        assert_eq!(p.uri, want, "{}: uri", label(i, p));
    }
}

#[test]
fn license_file_is_the_full_apache_2_0_text_cargo_declares() {
    assert_eq!(env!("CARGO_PKG_LICENSE"), "Apache-2.0");
    let text = std::fs::read_to_string(root().join("LICENSE")).expect("LICENSE at the repository root");
    for needle in [
        "Apache License\n                           Version 2.0, January 2004",
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
        "9. Accepting Warranty or Additional Liability.",
        "END OF TERMS AND CONDITIONS",
        "APPENDIX: How to apply the Apache License to your work.",
    ] {
        assert!(text.contains(needle), "LICENSE lacks {needle:?}");
    }
    assert!(text.lines().count() >= 200, "LICENSE is not the full text");
}

// --- the manifest and the release script agree ----------------------------------------------

/// One target of `scripts/release.sh TAG --dry-run`.
#[derive(Debug)]
struct Planned {
    platform: String,
    target: String,
    archive: String,
    uri: String,
    packs: Vec<String>,
    lacks: Vec<String>,
}

fn release_plan() -> &'static [Planned] {
    static PLAN: OnceLock<Vec<Planned>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let out = Command::new("bash")
            .arg(Path::new("scripts").join("release.sh"))
            .args([tag().as_str(), "--dry-run"])
            .current_dir(root())
            .output()
            .expect("running bash scripts/release.sh");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "release.sh --dry-run failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        parse_plan(&stdout)
    })
}

fn parse_plan(stdout: &str) -> Vec<Planned> {
    let mut plan: Vec<Planned> = Vec::new();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if !line.starts_with(' ') && words.len() >= 2 && words[0].contains('/') {
            plan.push(Planned {
                platform: words[0].into(),
                target: words[1].into(),
                archive: String::new(),
                uri: String::new(),
                packs: Vec::new(),
                lacks: Vec::new(),
            });
            continue;
        }
        let (Some(current), Some((key, value))) = (plan.last_mut(), line.trim().split_once(':')) else {
            continue;
        };
        let value = value.trim();
        match key {
            "archive" => current.archive = value.into(),
            "uri" => current.uri = value.into(),
            "packs" => current.packs = value.split_whitespace().map(String::from).collect(),
            "lacks" => current.lacks.push(value.split_whitespace().next().unwrap_or_default().into()),
            _ => {}
        }
    }
    plan
}

#[test]
fn release_script_plans_one_archive_per_release_platform() {
    let planned: Vec<(String, String)> = release_plan().iter().map(|p| (p.platform.clone(), p.target.clone())).collect();
    let wanted: Vec<(String, String)> = PLATFORMS.iter().map(|(os, arch, target, ..)| (format!("{os}/{arch}"), target.to_string())).collect();
    assert_eq!(planned, wanted);
    for p in release_plan() {
        assert!(p.uri.ends_with(&format!("/{}", p.archive)), "{}: uri {} does not name archive {}", p.platform, p.uri, p.archive);
    }
}

#[test]
fn every_manifest_uri_is_an_archive_the_release_script_produces() {
    let planned: BTreeMap<&str, &str> = release_plan().iter().map(|p| (p.platform.as_str(), p.uri.as_str())).collect();
    let mut in_manifest = BTreeMap::new();
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let (os, arch, ..) = release_platform(i, p);
        in_manifest.insert(format!("{os}/{arch}"), p.uri.as_str());
    }
    let in_manifest: BTreeMap<&str, &str> = in_manifest.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(in_manifest, planned, "manifest uris (left) vs `scripts/release.sh {} --dry-run` (right)", tag());
}

#[test]
fn every_file_the_manifest_copies_is_packed_by_the_release_script() {
    let completion_exists = root().join(COMPLETION_SRC).is_file();
    for (i, p) in manifest().spec.platforms.iter().enumerate() {
        let (os, arch, ..) = release_platform(i, p);
        let planned = release_plan().iter().find(|r| r.platform == format!("{os}/{arch}")).expect("planned platform");
        for f in p.files.iter().flatten() {
            if planned.packs.contains(&f.from) {
                continue;
            }
            // The completion script comes in a later change; until completions/ has it, the
            // script says it lacks it (and that the release is not publishable).
            let awaited = f.from == COMPLETION && !completion_exists && planned.lacks.contains(&f.from);
            assert!(awaited, "{}: the manifest copies {} but the release script packs only {:?}", label(i, p), f.from, planned.packs);
        }
    }
}
