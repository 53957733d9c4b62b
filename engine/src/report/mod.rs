//! The last step of the engine: report data built from the check's result, for the plugin to
//! render. Nothing here changes a verdict.
//!
//! - [`hints`]: what the user can do about a verdict (must-specify fields, scopes, headroom);
//! - [`quota_view`]: `describe`'s Used/Hard rows with exact percentages;
//! - [`queue_view`]: `describe`'s Kueue queues, their ClusterQueues' quota and reservations;
//! - [`warnings`]: a decided document in the short sentences the guard sends at apply time.

pub mod hints;
pub mod queue_view;
pub mod quota_view;
pub mod warnings;

use crate::admission::Detail;
use crate::check::{self, CheckOptions, ClusterState, DocumentReport, Report, Summary};
use crate::objects::Object;

/// Fills every document's hints from the report and the state after the check.
///
/// ```
/// use kubectl_quota_engine::check::{check, CheckOptions, ClusterState};
/// use kubectl_quota_engine::{manifest, objects, report};
///
/// let docs = manifest::parse_str("q.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n").unwrap();
/// let mut state = ClusterState::from_objects(docs.iter().map(|d| objects::decode(d).unwrap()), "default");
/// let pod = manifest::parse_str("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: x}]}\n").unwrap();
/// let opts = CheckOptions { namespace: "default".into(), ..CheckOptions::default() };
/// let mut r = check(&mut state, pod.iter().map(|d| objects::decode(d).unwrap()).collect(), &opts);
/// report::explain(&mut r, &state);
/// assert!(r.documents[0].hints[0].starts_with("add resources.requests.cpu to container(s) app"));
/// ```
pub fn explain(report: &mut Report, state: &ClusterState) {
    for d in report.documents.iter_mut() {
        d.hints = hints::for_document(d, state);
    }
}

/// A decided document, handed over whole: its verdict is final, and its hints are worked out
/// by [`Decided::finish`], from what they need of the state as it was when the document was
/// decided (the state moves on with the next document). Finishing is left to the caller so
/// that it can run beside the deciding of the next documents (the plugin finishes and prints
/// on a second thread); a document explained for refusals only (`Detail::Refusals`) gets no
/// hints, and finishing it costs nothing.
pub struct Decided {
    report: DocumentReport,
    facts: Option<hints::StateFacts>,
}

impl Decided {
    /// The report as decided, its hints not yet worked out.
    pub fn report(&self) -> &DocumentReport {
        &self.report
    }

    /// The finished report: hints filled (once; later calls return it as it is).
    pub fn finish(&mut self) -> &mut DocumentReport {
        if let Some(facts) = self.facts.take() {
            self.report.hints = hints::for_document_with(&self.report, &facts);
        }
        &mut self.report
    }
}

/// [`check::check_each`], each document handed over as soon as it is decided, as a
/// [`Decided`] that finishes into its full report (hints included) wherever the caller likes.
///
/// ```
/// use kubectl_quota_engine::check::{CheckOptions, ClusterState};
/// use kubectl_quota_engine::{manifest, objects, report};
///
/// let docs = manifest::parse_str("q.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n").unwrap();
/// let mut state = ClusterState::from_objects(docs.iter().map(|d| objects::decode(d).unwrap()), "default");
/// let pod = manifest::parse_str("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: x}]}\n").unwrap();
/// let opts = CheckOptions { namespace: "default".into(), ..CheckOptions::default() };
/// let mut hints = Vec::new();
/// report::decide_each(&mut state, pod.iter().map(|d| objects::decode(d).unwrap()).collect(), &opts, |mut d| {
///     hints.extend(d.finish().hints.clone());
/// });
/// assert!(hints[0].starts_with("add resources.requests.cpu to container(s) app"));
/// ```
pub fn decide_each<F>(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions, mut each: F) -> Summary
where
    F: FnMut(Decided),
{
    let explained = opts.detail != Detail::Refusals;
    check::check_each(state, objects, opts, |d, st| {
        let facts = explained.then(|| hints::state_facts(&d, st));
        each(Decided { report: d, facts })
    })
}
