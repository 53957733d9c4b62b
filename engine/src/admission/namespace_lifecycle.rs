//! NamespaceLifecycle, the first mutating plugin: an object is created only in a namespace
//! that exists. The refusal is the server's 404, `namespaces "x" not found`.

use std::collections::BTreeMap;

/// The refusal of a namespaced object created in `ns`, where `known` holds the namespaces
/// known to exist (`None`: unknown, nothing refused).
pub fn refusal(ns: &str, known: Option<&BTreeMap<String, BTreeMap<String, String>>>) -> Option<String> {
    (!known?.contains_key(ns)).then(|| format!("namespaces {ns:?} not found"))
}
