//! NamespaceLifecycle, the first mutating plugin: an object is created only in a namespace
//! that exists (the server's 404, `namespaces "x" not found`) and is not being terminated (a
//! 403, `unable to create new content in namespace x because it is being terminated`; updates
//! and deletes still pass).

use std::collections::{BTreeMap, BTreeSet};

/// The refusal of a namespaced object created in `ns`, where `known` holds the namespaces
/// known to exist (`None`: unknown, nothing refused).
pub fn refusal(ns: &str, known: Option<&BTreeMap<String, BTreeMap<String, String>>>) -> Option<String> {
    (!known?.contains_key(ns)).then(|| format!("namespaces {ns:?} not found"))
}

/// The refusal of a namespaced object created (not updated) in `ns`, where `terminating`
/// holds the namespaces known to be being terminated.
pub fn terminating_refusal(ns: &str, terminating: Option<&BTreeSet<String>>) -> Option<String> {
    terminating?.contains(ns).then(|| format!("unable to create new content in namespace {ns} because it is being terminated"))
}
