//! GitHub Actions annotations: one `::error` workflow command per document that would be refused
//! (in whole or in part), at the document's first line, so the refusal shows on the pull
//! request's diff where the manifest is; a `::warning` for one whose autoscaler quota stops
//! below its maximum.
//!
//! GitHub reads `::error file=F,line=L,title=T::MESSAGE` lines from a step's output. Its
//! escaping rules: in the message, `%`, `\r` and `\n` become `%25`, `%0D` and `%0A`; in a
//! property's value `:` and `,` too (`%3A`, `%2C`). Control characters in names are first
//! made visible as in every other text output ([`super::escape`]); the message keeps the line
//! breaks of our own making (a validation's list of errors), which GitHub shows as lines.

use kubectl_quota_engine::check::{DocumentReport, Outcome};

use super::check::verdict_line;
use crate::escape::{escape, escape_lines};

/// The annotation of a document, or `None` when everything it asks for would be created.
pub fn annotation(d: &DocumentReport) -> Option<String> {
    let capped = d.autoscaling.as_ref().filter(|c| c.capped() && d.outcome() != Outcome::Refused);
    if d.fully_admitted() {
        // Everything fits now, but quota stops its autoscaler below its maximum: a warning.
        let c = capped?;
        let title = format!("quota check: {} {} is capped by quota at {} of {} pods", c.autoscaler_kind.short(), c.autoscaler, c.fits, c.max_replicas);
        let mut props = location(d);
        props.push(format!("title={}", property(&escape(&title))));
        let message = format!("{}\nfrom {}", escape_lines(&c.sentence()), escape_lines(&d.source.to_string()));
        return Some(format!("::warning {}::{}\n", props.join(","), data(&message)));
    }
    let mut props = location(d);
    let who = format!("{}/{}", d.kind.to_lowercase(), d.name);
    let title = match d.outcome() {
        Outcome::Refused => format!("quota check: {who} would be refused"),
        Outcome::PodsRefused => format!("quota check: pods of {who} would be refused"),
        Outcome::PodsPending => format!("quota check: pods of {who} would stay Pending"),
        Outcome::RolloutStalls => format!("quota check: the rollout of {who} would stall"),
        Outcome::Undecided => format!("quota check: {who} cannot be decided from what could be read"),
        Outcome::Admitted => unreachable!("checked above"),
    };
    props.push(format!("title={}", property(&escape(&title))));
    let mut message = verdict_line(d);
    let mut add = |label: &str, text: &str| {
        message.push('\n');
        message.push_str(label);
        message.push_str(&escape_lines(text));
    };
    add("from ", &d.source.to_string());
    if let Some(e) = &d.server_error {
        add("server: ", e);
    }
    if let Some(r) = &d.refusal {
        for a in &r.alternatives {
            add(&format!("or, as the server {}: ", super::check::alternatives_why(r)), a);
        }
    }
    for h in &d.hints {
        add("hint: ", h);
    }
    if let Some(c) = capped {
        add("autoscaling: ", &c.sentence());
    }
    // Not a refusal: a warning, as the run's incomplete answer is.
    let level = if d.outcome() == Outcome::Undecided { "warning" } else { "error" };
    Some(format!("::{level} {}::{}\n", props.join(","), data(&message)))
}

/// Where an annotation points: the document's file and line. Standard input and URLs are no
/// file of the repository: the annotation then stands for the run as a whole, and its message
/// says where the document came from.
fn location(d: &DocumentReport) -> Vec<String> {
    let mut props = Vec::new();
    let file = &d.source.file;
    let in_repository = file != "-" && !file.starts_with("http://") && !file.starts_with("https://");
    if in_repository {
        props.push(format!("file={}", property(&d.source.file)));
        if let Some(line) = d.source.line {
            props.push(format!("line={line}"));
        }
    }
    props
}

/// The annotation of an error that ended the check (bad input, an unreachable server).
pub fn error_annotation(message: &str) -> String {
    format!("::error title=quota check could not run::{}\n", data(&escape_lines(message)))
}

/// A workflow command's data: `%`, `\r` and `\n` escaped.
pub fn data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: as [`data`], and `:` and `,` too.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping_follows_github_rules() {
        let cases = [("100%", "100%25", "100%25"), ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"), ("x: y, z", "x: y, z", "x%3A y%2C z"), ("%0A", "%250A", "%250A")];
        for (input, as_data, as_property) in cases {
            assert_eq!(data(input), as_data, "{input:?}");
            assert_eq!(property(input), as_property, "{input:?}");
        }
    }
}
