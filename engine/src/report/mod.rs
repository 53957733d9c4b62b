//! The last step of the engine: report data built from the check's result, for the plugin to
//! render. Nothing here changes a verdict.
//!
//! - [`hints`]: what the user can do about a verdict (must-specify fields, scopes, headroom);
//! - [`quota_view`]: `describe`'s Used/Hard rows with exact percentages.

pub mod hints;
pub mod quota_view;

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

/// [`check::check_each`], each document handed over as soon as it is decided with what its
/// hints need from the state at that point ([`hints::StateFacts`]): the state changes with the
/// next document, and [`hints::for_document_with`] fills the hints later (on another thread,
/// say) just as [`hints::for_document`] would have then.
pub fn check_with_facts<F>(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions, mut each: F) -> Summary
where
    F: FnMut(DocumentReport, hints::StateFacts),
{
    check::check_each(state, objects, opts, |d, st| {
        let facts = hints::state_facts(&d, st);
        each(d, facts)
    })
}
