//! ServiceAccount, a mutating plugin (third in the server's order): a pod created without a
//! ServiceAccount gets `default`, and one whose ServiceAccount does not exist in its namespace
//! is refused (403, after `is forbidden: `): `error looking up service account NS/NAME:
//! serviceaccount "NAME" not found`. Only creates are looked at; a mirror pod (made by a
//! kubelet) is not given one. What it mounts (the token volume, image pull secrets) charges
//! no quota and is not replayed.

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::Pod;

/// The ServiceAccount every namespace gets from the serviceaccounts controller.
pub const DEFAULT: &str = "default";

/// The annotation a kubelet's mirror pod carries.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The plugin's mutating half for a pod created in `ns`: sets `default` when the pod names
/// none; refuses a name not among `known` (the namespace's ServiceAccounts; `None`: unknown,
/// nothing refused). Returns the refusal text.
pub fn admit_pod(pod: &mut Pod, annotations: &BTreeMap<String, String>, ns: &str, known: Option<&BTreeSet<String>>) -> Result<(), String> {
    if annotations.contains_key(MIRROR_POD_ANNOTATION) {
        return Ok(());
    }
    if pod.service_account_name.is_empty() {
        pod.service_account_name = DEFAULT.into();
    }
    let name = &pod.service_account_name;
    match known {
        Some(names) if !names.contains(name) => Err(format!("error looking up service account {ns}/{name}: serviceaccount {name:?} not found")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_service_account_is_refused_in_the_servers_words() {
        let known: BTreeSet<String> = ["default".to_string(), "builder".to_string()].into();
        let none = BTreeMap::new();
        let empty = BTreeSet::new();
        let mirror: BTreeMap<String, String> = [(MIRROR_POD_ANNOTATION.to_string(), "x".to_string())].into();
        type Case<'a> = (&'a str, &'a str, &'a BTreeMap<String, String>, Option<&'a BTreeSet<String>>, Result<(), String>, &'a str);
        let cases: Vec<Case> = vec![
            ("no name: default, which exists", "", &none, Some(&known), Ok(()), "default"),
            ("a name that exists", "builder", &none, Some(&known), Ok(()), "builder"),
            (
                "a name that does not exist",
                "ghost",
                &none,
                Some(&known),
                Err("error looking up service account ns/ghost: serviceaccount \"ghost\" not found".into()),
                "ghost",
            ),
            (
                "no default yet",
                "",
                &none,
                Some(&empty),
                Err("error looking up service account ns/default: serviceaccount \"default\" not found".into()),
                "default",
            ),
            ("unknown ServiceAccounts: nothing refused", "ghost", &none, None, Ok(()), "ghost"),
            ("a mirror pod is left alone", "", &mirror, Some(&empty), Ok(()), ""),
        ];
        for (what, name, annotations, known, want, after) in cases {
            let mut pod = Pod { service_account_name: name.into(), ..Pod::default() };
            assert_eq!(admit_pod(&mut pod, annotations, "ns", known), want, "{what}");
            assert_eq!(pod.service_account_name, after, "{what}");
        }
    }
}
