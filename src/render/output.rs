//! Every output of `check`, behind one writer: the report ([`super::check`]: text, JSON,
//! YAML), JUnit XML ([`super::junit`]) and GitHub Actions annotations ([`super::github`]),
//! alone or after the text report.

use kubectl_quota_engine::check::DocumentReport;
use kubectl_quota_engine::version::VersionReport;

pub use super::check::Text;
use super::check::{Output as Report, ReportWriter as Reporter};
use super::github::annotation;
use super::junit::JunitWriter;

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Yaml,
    Junit,
    /// GitHub Actions annotations only.
    Github,
    /// The text report, then an annotation per refused document (the default under GitHub
    /// Actions: the job's log keeps the whole report, the pull request gets the annotations).
    TextAndGithub,
}

/// Writes `check`'s output as its documents are decided (see [`Reporter`]).
pub struct ReportWriter<W: std::io::Write> {
    inner: Inner<W>,
}

enum Inner<W: std::io::Write> {
    Report(Reporter<W>),
    Junit(JunitWriter<W>),
    /// Annotations, written after the text report when there is one (its writer owns the
    /// output until it finishes); one short line per refused document is held till then.
    Github {
        report: Option<Reporter<W>>,
        w: Option<W>,
        held: Vec<String>,
    },
}

impl<W: std::io::Write> ReportWriter<W> {
    pub fn new(w: W, output: Output, text: Text, kubernetes: &VersionReport) -> Self {
        let inner = match output {
            Output::Text => Inner::Report(Reporter::new(w, Report::Text, text, kubernetes)),
            Output::Json => Inner::Report(Reporter::new(w, Report::Json, text, kubernetes)),
            Output::Yaml => Inner::Report(Reporter::new(w, Report::Yaml, text, kubernetes)),
            Output::Junit => Inner::Junit(JunitWriter::new(w, kubernetes)),
            Output::Github => Inner::Github { report: None, w: Some(w), held: Vec::new() },
            Output::TextAndGithub => Inner::Github { report: Some(Reporter::new(w, Report::Text, text, kubernetes)), w: None, held: Vec::new() },
        };
        ReportWriter { inner }
    }

    /// Writes (or holds) one document.
    pub fn document(&mut self, d: &DocumentReport) -> std::io::Result<()> {
        match &mut self.inner {
            Inner::Report(r) => r.document(d),
            Inner::Junit(j) => j.document(d),
            Inner::Github { report, w, held } => {
                if let Some(r) = report {
                    r.document(d)?;
                    held.extend(annotation(d));
                    return Ok(());
                }
                match (annotation(d), w) {
                    (Some(a), Some(w)) => w.write_all(a.as_bytes()),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Writes what follows the documents and returns the writer.
    pub fn finish(self, notes: &[String]) -> std::io::Result<W> {
        match self.inner {
            Inner::Report(r) => r.finish(notes),
            Inner::Junit(j) => j.finish(notes),
            Inner::Github { report, w, held } => {
                let mut w = match (report, w) {
                    (Some(r), _) => r.finish(notes)?,
                    (None, Some(w)) => w,
                    (None, None) => unreachable!("one of them is set"),
                };
                for a in held {
                    w.write_all(a.as_bytes())?;
                }
                // The run's notes (the state has no quota in the namespace checked, say) are
                // warnings: they change what the verdicts mean.
                for n in notes {
                    w.write_all(format!("::warning title=quota check::{}\n", super::github::data(&crate::escape::escape_lines(n))).as_bytes())?;
                }
                Ok(w)
            }
        }
    }
}
