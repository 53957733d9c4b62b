//! RuntimeClass, a plugin with both halves, on pod creation: the mutating half sets the pod's
//! `overhead` from its RuntimeClass (refusing a class that does not exist and an overhead that
//! differs from the class's); the validating half refuses an overhead the pod sets without a
//! RuntimeClass that defines one.

use std::collections::BTreeMap;

use crate::objects::Pod;
use crate::resources::ResourceList;

const UNDECLARED: &str = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// The class a pod names, as the plugin looks it up: from 1.38 an empty name is no name
/// (`empty_ignored`, pod validation refuses it later); before, it is looked up like any other.
fn named(pod: &Pod, empty_ignored: bool) -> Option<&str> {
    pod.runtime_class_name.as_deref().filter(|n| !(empty_ignored && n.is_empty()))
}

/// The mutating half: the pod's overhead from its RuntimeClass. Returns notes, or the refusal
/// text. Classes unknown (`None`) change and refuse nothing, except an empty name before 1.38,
/// which no RuntimeClass can have.
pub fn set_overhead(pod: &mut Pod, classes: Option<&BTreeMap<String, ResourceList>>, empty_ignored: bool) -> Result<Vec<String>, String> {
    let name = named(pod, empty_ignored).map(str::to_string);
    if name.as_deref() == Some("") {
        return Err("pod rejected: RuntimeClass \"\" not found".into());
    }
    let (Some(name), Some(classes)) = (name, classes) else { return Ok(vec![]) };
    let Some(overhead) = classes.get(&name) else {
        return Err(format!("pod rejected: RuntimeClass \"{name}\" not found"));
    };
    if overhead.is_empty() {
        return Ok(vec![]);
    }
    if !pod.overhead.is_empty() && &pod.overhead != overhead {
        return Err("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".into());
    }
    pod.overhead = overhead.clone();
    Ok(vec![format!("RuntimeClass {name}: overhead {}", crate::resources::pretty_print(overhead))])
}

/// The validating half: an overhead without a RuntimeClass that defines one is refused (the
/// mismatch was refused by the mutating half already). Classes unknown: only a pod naming no
/// class is decided.
pub fn validate_overhead(pod: &Pod, classes: Option<&BTreeMap<String, ResourceList>>, empty_ignored: bool) -> Result<(), String> {
    if pod.overhead.is_empty() {
        return Ok(());
    }
    let defined = match (named(pod, empty_ignored), classes) {
        (None, _) => false,
        (Some(_), None) => return Ok(()),
        (Some(name), Some(classes)) => classes.get(name).is_some_and(|o| !o.is_empty()),
    };
    if defined {
        Ok(())
    } else {
        Err(UNDECLARED.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::Quantity;

    fn rl(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    #[test]
    fn runtime_class_sets_overhead() {
        let classes: BTreeMap<String, ResourceList> = [("kata".to_string(), rl(&[("cpu", "250m")])), ("runc".to_string(), rl(&[]))].into();
        let mut p = Pod { runtime_class_name: Some("kata".into()), ..Pod::default() };
        set_overhead(&mut p, Some(&classes), false).unwrap();
        assert_eq!(crate::resources::pretty_print(&p.overhead), "cpu=250m");
        assert_eq!(validate_overhead(&p, Some(&classes), false), Ok(()));
        let mut p = Pod { runtime_class_name: Some("gvisor".into()), ..Pod::default() };
        assert_eq!(set_overhead(&mut p, Some(&classes), false).unwrap_err(), "pod rejected: RuntimeClass \"gvisor\" not found");
        let mut p = Pod { runtime_class_name: Some("kata".into()), overhead: rl(&[("cpu", "1")]), ..Pod::default() };
        assert_eq!(set_overhead(&mut p, Some(&classes), false).unwrap_err(), "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        // An overhead with no class, or a class that defines none: the validating half refuses.
        for class in [None, Some("runc")] {
            let mut p = Pod { runtime_class_name: class.map(str::to_string), overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
            assert_eq!(set_overhead(&mut p, Some(&classes), false), Ok(vec![]));
            assert_eq!(validate_overhead(&p, Some(&classes), false).unwrap_err(), UNDECLARED, "{class:?}");
        }
        let p = Pod { overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
        assert_eq!(validate_overhead(&p, None, false).unwrap_err(), UNDECLARED);
    }

    #[test]
    fn an_empty_runtime_class_name_is_refused_by_admission_before_1_38_and_left_to_validation_after() {
        let classes: BTreeMap<String, ResourceList> = [("kata".to_string(), rl(&[("cpu", "250m")]))].into();
        for known in [Some(&classes), None] {
            let mut p = Pod { runtime_class_name: Some(String::new()), ..Pod::default() };
            assert_eq!(set_overhead(&mut p, known, false).unwrap_err(), "pod rejected: RuntimeClass \"\" not found");
            assert_eq!(set_overhead(&mut p, known, true), Ok(vec![]));
            assert!(p.overhead.is_empty());
            // An overhead the pod sets itself is then one no class defines.
            let p = Pod { runtime_class_name: Some(String::new()), overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
            assert_eq!(validate_overhead(&p, known, true).unwrap_err(), UNDECLARED);
        }
    }
}
