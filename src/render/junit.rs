//! `check -o junit`: the check as a JUnit XML report, the format GitLab (`artifacts:reports:junit`),
//! Jenkins (`junit`) and most CI systems show as test results.
//!
//! One test case per document (the object: is it admitted?) and one more per workload (its
//! pods and its rollout: are they all created? skipped when the object itself is refused). A refusal is a `<failure>` whose `message`
//! is the server's own message and whose text is the document's whole text report (every
//! quota, the table, the hints). The counts of the suite come before its test cases in the
//! XML, so the test cases are held until the end: in memory up to [`HELD_IN_MEMORY`] bytes,
//! past that in a file of their own (removed at once where the system allows, else at the
//! end), so a run of thousands of refused documents is streamed, not held.
//!
//! A check that cannot run at all (a manifest that cannot be read) still writes a report:
//! one failed test case saying why ([`error_report`]), so that a CI's JUnit step shows it.
//!
//! The layout follows the schema Jenkins validates against (tests/ci/junit.xsd holds it as
//! the tests read it): `testsuites` > `testsuite` (`properties`, `testcase`*, `system-out`),
//! `testcase` with `name`, `classname`, `file`, `line` and `time`.

use std::fmt::Write as _;

use kubectl_quota_engine::check::{DocumentReport, Outcome};
use kubectl_quota_engine::version::VersionReport;

use super::check::{verdict_line, Output, ReportWriter};
use crate::escape::escape_lines;

/// The name of the suite (and of the report).
const SUITE: &str = "kubectl quota check";

/// Test cases held in memory before they go to a file of their own.
pub const HELD_IN_MEMORY: usize = 4 << 20;

/// Test cases written so far: in memory, then in an unnamed (or soon removed) file.
struct Held {
    cases: String,
    spill: Option<Spill>,
}

struct Spill {
    file: std::io::BufWriter<std::fs::File>,
    /// Removed when done (a system that cannot remove an open file).
    path: Option<std::path::PathBuf>,
}

impl Held {
    /// Moves what is in memory to the file once there is too much of it. Without a file to be
    /// had (a read-only temporary directory) the cases stay in memory.
    fn spill_if_full(&mut self) {
        if self.cases.len() < HELD_IN_MEMORY {
            return;
        }
        if self.spill.is_none() {
            self.spill = Spill::create();
        }
        if let Some(s) = &mut self.spill {
            if std::io::Write::write_all(&mut s.file, self.cases.as_bytes()).is_ok() {
                self.cases.clear();
            }
        }
    }

    /// Copies every case, in order, to `w`.
    fn write_to(self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        use std::io::{Seek, Write};
        if let Some(s) = self.spill {
            let mut file = s.file.into_inner().map_err(|e| e.into_error())?;
            file.flush()?;
            file.seek(std::io::SeekFrom::Start(0))?;
            std::io::copy(&mut file, w)?;
            drop(file);
            if let Some(p) = s.path {
                let _ = std::fs::remove_file(p);
            }
        }
        w.write_all(self.cases.as_bytes())
    }
}

impl Spill {
    fn create() -> Option<Spill> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = std::env::temp_dir().join(format!("kubectl-quota-junit-{}-{nanos}", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).ok()?;
        // Unnamed from now on where the system allows it: nothing is left behind, whatever ends
        // the run.
        let path = std::fs::remove_file(&path).is_err().then_some(path);
        Some(Spill { file: std::io::BufWriter::new(file), path })
    }
}

/// Writes a check as JUnit XML (see the module comment).
pub struct JunitWriter<W: std::io::Write> {
    w: W,
    kubernetes: VersionReport,
    held: Held,
    tests: usize,
    failures: usize,
    skipped: usize,
}

impl<W: std::io::Write> JunitWriter<W> {
    pub fn new(w: W, kubernetes: &VersionReport) -> Self {
        JunitWriter { w, kubernetes: kubernetes.clone(), held: Held { cases: String::new(), spill: None }, tests: 0, failures: 0, skipped: 0 }
    }

    /// Adds a document's test cases.
    pub fn document(&mut self, d: &DocumentReport) -> std::io::Result<()> {
        let outcome = d.outcome();
        let who = format!("{}/{}", d.kind.to_lowercase(), d.name);
        let name = match &d.namespace {
            Some(ns) => format!("{who} (namespace {ns})"),
            None => who,
        };
        let undecided = || d.undecided.iter().map(|u| u.why.as_str()).collect::<Vec<_>>().join("; ");
        let workload = is_workload(d);
        if outcome == Outcome::Undecided && !workload {
            // Neither a pass nor a failure: what it needs could not be read.
            self.skipped(d, &name, &format!("cannot be decided: {}", undecided()));
            self.held.spill_if_full();
            return Ok(());
        }
        let refused = (outcome == Outcome::Refused).then(|| (d.refusal.as_ref().map(|r| format!("{:?}", r.reason)), d.message.clone()));
        self.case(d, &name, refused);
        if workload {
            // Every workload has its pods' test case, so that the same manifests make the same
            // test cases from run to run (CI systems follow a test by its name): skipped when
            // the object itself is refused, as no pod is then created at all.
            let pods = format!("{name}: pods");
            let failure = match outcome {
                Outcome::Refused => {
                    self.skipped(d, &pods, &format!("the {} itself would be refused: no pod is created", d.kind));
                    return Ok(());
                }
                Outcome::PodsRefused => Some((Some("PodsRefused".to_string()), d.pod_message.clone())),
                Outcome::PodsPending => Some((Some("PodsPending".to_string()), d.pod_message.clone())),
                Outcome::RolloutStalls => {
                    Some((Some("RolloutStalls".to_string()), d.rollout.as_ref().and_then(|r| r.stall.as_ref()).map(|s| s.message.clone())))
                }
                Outcome::Undecided => {
                    self.skipped(d, &pods, &format!("cannot be decided: {}", undecided()));
                    return Ok(());
                }
                Outcome::Admitted => None,
            };
            self.case(d, &pods, failure);
        }
        if let Some(c) = d.autoscaling.as_ref().filter(|_| outcome != Outcome::Refused) {
            self.autoscaling(d, &format!("{name}: autoscaling"), c);
        }
        self.held.spill_if_full();
        Ok(())
    }

    /// The test case of an autoscaler's ceiling: a failure when quota refuses even its
    /// minimum; else passed, its sentence in `system-out` when quota stops it below its maximum
    /// (a warning, as the run's exit status has it unless `--fail-on-ceiling`).
    fn autoscaling(&mut self, d: &DocumentReport, name: &str, c: &kubectl_quota_engine::autoscaling::Ceiling) {
        if c.minimum_refused() {
            self.case(d, name, Some((Some("MinimumRefused".into()), Some(c.sentence()))));
            return;
        }
        self.tests += 1;
        self.open_case(d, name);
        let cases = &mut self.held.cases;
        if c.capped() {
            let _ = write!(cases, ">\n      <system-out>{}</system-out>\n    </testcase>\n", text(&c.sentence()));
        } else {
            cases.push_str("/>\n");
        }
    }

    /// A test case that did not run, and why.
    fn skipped(&mut self, d: &DocumentReport, name: &str, why: &str) {
        self.tests += 1;
        self.skipped += 1;
        self.open_case(d, name);
        let _ = write!(self.held.cases, ">\n      <skipped message=\"{}\"/>\n    </testcase>\n", attr(why));
    }

    /// A test case's opening tag, left open.
    fn open_case(&mut self, d: &DocumentReport, name: &str) {
        let c = &mut self.held.cases;
        let _ = write!(c, "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"", attr(name), attr(&classname(d)), attr(&d.source.file));
        if let Some(line) = d.source.line {
            let _ = write!(c, " line=\"{line}\"");
        }
        c.push_str(" time=\"0\"");
    }

    /// One test case; `failure` is its type and the server's message when it fails.
    fn case(&mut self, d: &DocumentReport, name: &str, failure: Option<(Option<String>, Option<String>)>) {
        self.tests += 1;
        self.open_case(d, name);
        let c = &mut self.held.cases;
        let Some((kind, message)) = failure else {
            c.push_str("/>\n");
            return;
        };
        self.failures += 1;
        let message = message.unwrap_or_else(|| plain_verdict(d));
        let _ = write!(c, ">\n      <failure message=\"{}\" type=\"{}\">", attr(&message), attr(kind.as_deref().unwrap_or("Refused")));
        c.push_str(&text(&document_text(d, &self.kubernetes)));
        c.push_str("</failure>\n    </testcase>\n");
    }

    /// Writes the report and returns the writer.
    pub fn finish(mut self, notes: &[String]) -> std::io::Result<W> {
        self.w.write_all(head(self.tests, self.failures, self.skipped, Some(&self.kubernetes)).as_bytes())?;
        self.held.write_to(&mut self.w)?;
        self.w.write_all(tail(notes).as_bytes())?;
        Ok(self.w)
    }
}

/// The report's opening: the XML declaration, the counts, the release's properties.
fn head(tests: usize, failures: usize, skipped: usize, kubernetes: Option<&VersionReport>) -> String {
    let mut head = String::new();
    head.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"0\"");
    let _ = writeln!(head, "<testsuites name=\"{SUITE}\" {counts} time=\"0\">");
    let _ = writeln!(head, "  <testsuite name=\"{SUITE}\" {counts} skipped=\"{skipped}\" time=\"0\">");
    if let Some(k) = kubernetes {
        head.push_str("    <properties>\n");
        let _ = writeln!(head, "      <property name=\"kubernetes.version\" value=\"{}\"/>", attr(&k.version));
        let _ = writeln!(head, "      <property name=\"kubernetes.source\" value=\"{}\"/>", attr(&k.source));
        head.push_str("    </properties>\n");
    }
    head
}

/// The report's end: the run's notes, then the closing tags.
fn tail(notes: &[String]) -> String {
    let mut tail = String::new();
    if !notes.is_empty() {
        let lines: Vec<String> = notes.iter().map(|n| format!("note: {n}")).collect();
        let _ = writeln!(tail, "    <system-out>{}</system-out>", text(&lines.join("\n")));
    }
    tail.push_str("  </testsuite>\n</testsuites>\n");
    tail
}

/// The report of a check that could not run (`error` is what stopped it, as printed on
/// standard error): one failed test case, so that a CI's JUnit step shows the run failed and
/// why rather than finding no report at all.
pub fn error_report(error: &str) -> String {
    let mut out = head(1, 1, 0, None);
    let first = error.lines().next().unwrap_or_default();
    let _ = write!(
        out,
        "    <testcase name=\"the check could not run\" classname=\"{SUITE}\" time=\"0\">\n      <failure message=\"{}\" type=\"InputError\">{}</failure>\n    </testcase>\n",
        attr(first),
        text(error)
    );
    out.push_str(&tail(&[]));
    out
}

/// Whether a document is a workload: something whose controllers create pods (known by its
/// kind, so that a refused one, whose report says nothing of pods, is one too).
fn is_workload(d: &DocumentReport) -> bool {
    const KINDS: [&str; 7] = ["Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob"];
    KINDS.contains(&d.kind.as_str()) || d.replicas.is_some() || d.pods.is_some() || d.rollout.is_some() || d.pods_pending.is_some()
}

/// The test case's class: where the document came from (the file, or the kustomization).
fn classname(d: &DocumentReport) -> String {
    d.source.file.clone()
}

/// The verdict line without colours (for a failure that carries no server message).
fn plain_verdict(d: &DocumentReport) -> String {
    let line = verdict_line(d);
    strip_ansi(&line)
}

/// A document's whole text report, as `check` prints it.
fn document_text(d: &DocumentReport, kubernetes: &VersionReport) -> String {
    let mut out = Vec::new();
    let mut w = ReportWriter::new(&mut out, Output::Text, super::check::Text::Explain, kubernetes);
    let _ = w.document(d);
    strip_ansi(&String::from_utf8_lossy(&out))
}

/// `s` without the colour sequences of [`colored`] (the report is for a file, not a terminal).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('m') {
            Some(j) if after[..j].bytes().all(|b| b.is_ascii_digit() || b == b';') => rest = &after[j + 1..],
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Text made safe for XML 1.0: control characters made visible as in every text output (XML
/// 1.0 cannot carry most of them at all), then `&`, `<` and `>` escaped.
fn text(s: &str) -> String {
    let s = escape_lines(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // Not characters XML 1.0 allows.
            '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// An attribute's value: as [`text`], quotes escaped, and line breaks kept as `&#10;` (a
/// parser would turn a raw one into a space).
fn attr(s: &str) -> String {
    text(s).replace('"', "&quot;").replace('\n', "&#10;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_special_and_control_characters_are_escaped() {
        let cases = [
            ("a<b>&c", "a&lt;b&gt;&amp;c", "a&lt;b&gt;&amp;c"),
            ("say \"hi\"", "say \"hi\"", "say &quot;hi&quot;"),
            ("one\ntwo", "one\ntwo", "one&#10;two"),
            ("bell\x07 esc\x1b", "bell\\u0007 esc^[", "bell\\u0007 esc^["),
            ("non\u{ffff}char", "non\\uffffchar", "non\\uffffchar"),
        ];
        for (input, as_text, as_attr) in cases {
            assert_eq!(text(input), as_text, "{input:?}");
            assert_eq!(attr(input), as_attr, "{input:?}");
        }
    }

    #[test]
    fn cases_past_the_memory_bound_go_through_a_file_in_order() {
        let mut held = Held { cases: String::new(), spill: None };
        let mut want = String::new();
        for i in 0..3 {
            let chunk = format!("<case {i}/>\n").repeat(HELD_IN_MEMORY / 10 + 1);
            held.cases.push_str(&chunk);
            want.push_str(&chunk);
            held.spill_if_full();
            assert!(held.cases.len() < HELD_IN_MEMORY, "{i}: spilled");
        }
        assert!(held.spill.is_some());
        held.cases.push_str("<last/>\n");
        want.push_str("<last/>\n");
        let mut out = Vec::new();
        held.write_to(&mut out).unwrap();
        assert!(out == want.as_bytes());
    }

    #[test]
    fn an_error_is_a_report_with_one_failed_case() {
        let r = error_report("m.yaml: document 1: bad <thing>\nsecond line");
        assert!(r.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kubectl quota check\" tests=\"1\" failures=\"1\""), "{r}");
        assert!(
            r.contains(
                "<failure message=\"m.yaml: document 1: bad &lt;thing&gt;\" type=\"InputError\">m.yaml: document 1: bad &lt;thing&gt;\nsecond line</failure>"
            ),
            "{r}"
        );
        assert!(r.ends_with("  </testsuite>\n</testsuites>\n"), "{r}");
    }

    #[test]
    fn colour_sequences_are_stripped() {
        assert_eq!(strip_ansi("\x1b[1;31mrefused\x1b[0m: x"), "refused: x");
        assert_eq!(strip_ansi("no colour"), "no colour");
    }
}
