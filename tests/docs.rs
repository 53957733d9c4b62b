//! README is a front page a newcomer reads in minutes, every link in it and in docs/ leads
//! somewhere (a file that exists, and for `file.md#anchor` or `#anchor` a heading there), and
//! every `$ kubectl quota ...` block prints what it shows: the offline ones run here, the live
//! ones in tests/live_docs.rs, and the few not run are listed in tests/docs/not-run.txt with
//! their reason (tests/common/docs.rs says how a block is marked).

mod common;

use std::collections::BTreeSet;

use common::docs as blocks;
use common::root;

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation other than `-` and
/// `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of a markdown file outside fenced blocks.
fn unfenced(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors of a markdown file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    unfenced(text).filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

/// The targets of `[text](target)` links outside fenced blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in unfenced(text) {
        // Drop code spans: a `](` inside one is not a link.
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn readme_is_a_front_page_under_250_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(n < 250, "README.md has {n} lines: move details into docs/");
    // What a newcomer needs first is there.
    for needle in ["## Install", "tests/run-all.sh", "## Namespaces: `-n` and `-A`", "## Exit status", "## Rights for a complete answer", "## Where to go next"]
    {
        assert!(readme.contains(needle), "README lacks {needle:?}");
    }
}

#[test]
fn every_link_in_readme_and_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for file in blocks::files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
            let resolved = if path.is_empty() { file.clone() } else { dir.join(path) };
            if !resolved.exists() {
                broken.push(format!("{}: {target}: no such file", file.display()));
                continue;
            }
            if let Some(anchor) = anchor.filter(|_| resolved.extension().is_some_and(|e| e == "md")) {
                if !anchors(&std::fs::read_to_string(&resolved).unwrap()).contains(anchor) {
                    broken.push(format!("{}: {target}: no such heading", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// FNV-1a, 64 bits: a fingerprint of a block's text.
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The not-run blocks as tests/docs/not-run.txt lists them: the file, each command, the reason,
/// and a fingerprint of everything the block shows, so that no output shown changes unseen.
fn not_run_listing(all: &[blocks::Block]) -> String {
    let mut out = String::new();
    for b in all {
        if let blocks::Mode::NotRun { reason } = &b.mode {
            out.push_str(&format!("{}\n", b.file));
            let mut shown = String::new();
            for s in &b.steps {
                out.push_str(&format!("  $ {}\n", s.command));
                shown.push_str(&format!("$ {}\n{}\n{:?}\n", s.command, s.output.join("\n"), s.status));
            }
            out.push_str(&format!("  not run: {reason}\n  shows: {:016x}\n", fingerprint(&shown)));
        }
    }
    out
}

#[test]
fn every_command_block_is_run_or_listed_as_not_run_with_its_reason() {
    let all = blocks::all_blocks().unwrap_or_else(|e| panic!("{e}"));
    let listing = not_run_listing(&all);
    let path = root().join("tests/docs/not-run.txt");
    if std::env::var_os("UPDATE_DOCS_NOT_RUN").is_some() {
        std::fs::write(&path, &listing).unwrap();
    }
    let listed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(listed, listing, "the blocks marked `not run` differ from tests/docs/not-run.txt (UPDATE_DOCS_NOT_RUN=1 rewrites it: review the diff)");
    // Every step of a block that runs is a command the harness runs.
    let mut bad = Vec::new();
    for b in &all {
        if let blocks::Mode::Offline { dir } = &b.mode {
            if let Some(d) = dir {
                if !root().join(d).is_dir() {
                    bad.push(format!("{}: no folder {d}", b.place()));
                }
            }
            for s in &b.steps {
                if let Err(e) = blocks::plugin_command(&s.command) {
                    bad.push(format!("{}:{}: {e} (an offline block runs `kubectl quota` commands only: mark it `live` or `not run`)", b.file, s.line));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_offline_block_prints_what_it_shows() {
    let all = blocks::all_blocks().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut ran = 0;
    for b in &all {
        let blocks::Mode::Offline { dir } = &b.mode else { continue };
        let cwd = dir.as_ref().map_or_else(|| root().to_path_buf(), |d| root().join(d));
        for s in &b.steps {
            let Ok((env, args)) = blocks::plugin_command(&s.command) else { continue };
            let (got, status) = blocks::run_plugin(&cwd, &env, &args, None);
            ran += 1;
            failures.extend(blocks::compare(b, s, &got, status));
        }
    }
    assert!(ran >= 8, "only {ran} documented commands ran offline");
    assert!(failures.is_empty(), "{} documented command(s) print something else:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_changed_output_line_fails_the_block() {
    // The harness itself: a block whose shown output or status differs is caught.
    let text = "```\n$ kubectl quota version\nnot what it prints\n$ echo $?\n0\n```\n";
    let b = &blocks::blocks("x.md", text).unwrap()[0];
    assert_eq!(b.mode, blocks::Mode::Offline { dir: None });
    assert_eq!(b.steps.len(), 1);
    assert_eq!(b.steps[0].status, Some(0));
    let (env, args) = blocks::plugin_command(&b.steps[0].command).unwrap();
    let (got, status) = blocks::run_plugin(root(), &env, &args, None);
    assert!(blocks::compare(b, &b.steps[0], &got, status).is_some());
    let shown: Vec<String> = got.lines().map(str::to_string).collect();
    let same = blocks::Step { output: shown, ..b.steps[0].clone() };
    assert_eq!(blocks::compare(b, &same, &got, status), None);
    assert!(blocks::compare(b, &blocks::Step { status: Some(1), ..same.clone() }, &got, status).is_some());
}

#[test]
fn block_markers_and_shell_words_are_read_as_documented() {
    let cases: &[(&str, Result<blocks::Mode, ()>)] = &[
        ("", Ok(blocks::Mode::Offline { dir: None })),
        ("<!-- docs: offline in tests/docs/rights -->\n", Ok(blocks::Mode::Offline { dir: Some("tests/docs/rights".into()) })),
        ("<!-- docs: live 1.37 shop -->\n", Ok(blocks::Mode::Live { release: "1.37".into(), setup: "shop".into() })),
        ("<!-- docs: not run: needs a kubelet -->\n", Ok(blocks::Mode::NotRun { reason: "needs a kubelet".into() })),
        ("<!-- docs: not run: -->\n", Err(())),
        ("<!-- docs: sometimes -->\n", Err(())),
    ];
    for (marker, want) in cases {
        let text = format!("{marker}```console\n$ kubectl quota describe\n(exit 2)\n```\n");
        let got = blocks::blocks("x.md", &text).map(|b| b[0].mode.clone()).map_err(|_| ());
        assert_eq!(&got, want, "{marker:?}");
    }
    assert_eq!(
        blocks::split("kubectl quota create q --scope-selector 'PriorityClass In [a, b]' # c").unwrap(),
        ["kubectl", "quota", "create", "q", "--scope-selector", "PriorityClass In [a, b]"]
    );
    assert_eq!(
        blocks::plugin_command("GITHUB_ACTIONS=true kubectl quota check").unwrap(),
        (vec![("GITHUB_ACTIONS".into(), "true".into())], vec!["check".to_string()])
    );
    for shell in ["kubectl quota snapshot > state.yaml", "kubectl quota plan | kubectl apply -f -", "grep x state.yaml", "kubectl quota check -f $F"] {
        assert!(blocks::plugin_command(shell).is_err(), "{shell}");
    }
    let shown = ["a".to_string(), "...".to_string(), "d".to_string()];
    assert!(blocks::matches(&shown, &["a", "b", "c", "d"]));
    assert!(blocks::matches(&shown, &["a", "d"]));
    assert!(!blocks::matches(&shown, &["a", "b"]));
}

#[test]
fn benchmark_figures_name_the_run_they_come_from() {
    // performance.md's table: each row links the RESULTS.md run it was measured in (the link
    // check above holds the heading to exist), or is from the row above's ("the same run").
    let text = std::fs::read_to_string(root().join("docs/performance.md")).unwrap();
    let rows: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("| what | measured | run")).skip(2).take_while(|l| l.starts_with('|')).collect();
    assert!(rows.len() >= 5, "performance.md lost its table of measured figures");
    for (i, row) in rows.iter().enumerate() {
        let run = row.trim_end_matches('|').rsplit('|').next().unwrap().trim();
        let named = run.contains("](../bench/RESULTS.md#") || (i > 0 && run == "the same run");
        assert!(named, "performance.md: a figure without its run: {row}");
    }
    // Elsewhere a figure from a benchmark links its run too.
    for (file, figure) in [("README.md", "0.98 ms"), ("docs/guard.md", "0.98 ms")] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let at = text.find(figure).unwrap_or_else(|| panic!("{file} no longer quotes {figure}"));
        assert!(text[at..].chars().take(300).collect::<String>().contains("RESULTS.md#"), "{file}: {figure} does not name its run");
    }
}

/// docs/rights.md names every kind a live check reads, and its ClusterRole for the classes
/// lists every kind read cluster-wide and the add-on kinds `view` does not grant: a kind added
/// to the table of cluster-data kinds and not to the page fails here.
#[test]
fn the_rights_page_names_every_kind_a_check_reads() {
    use kubectl_quota_engine::check::cluster_kinds::{Read, Served, CLUSTER_KINDS, EXISTING};
    let page = std::fs::read_to_string(root().join("docs/rights.md")).unwrap();
    let table: String = page.lines().filter(|l| l.starts_with('|')).collect::<Vec<_>>().join("\n");
    let role: String = page.lines().filter(|l| l.starts_with("- {apiGroups:")).collect::<Vec<_>>().join("\n");
    for k in CLUSTER_KINDS {
        match k.read {
            Read::No => {}
            Read::AsNeeded(how) if how == EXISTING => assert!(table.contains("the kinds checked"), "docs/rights.md: the objects documents name"),
            _ => assert!(table.contains(k.plural), "docs/rights.md does not say that a check reads {}", k.group_resource),
        }
        // Cluster-wide lists are granted by no namespace's role; `view` leaves out the VPA's kind.
        if k.read == Read::Cluster || k.served == Served::AddOn("the VPA") {
            assert!(role.contains(k.plural), "docs/rights.md's ClusterRole does not grant listing {}", k.group_resource);
        }
    }
}
