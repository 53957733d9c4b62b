//! RuntimeClass, a plugin with both halves, on pod creation: the mutating half sets the pod's
//! `overhead` from its RuntimeClass (refusing a class that does not exist and an overhead that
//! differs from the class's); the validating half refuses an overhead the pod sets without a
//! RuntimeClass that defines one.

use std::collections::BTreeMap;

use crate::objects::Pod;
use crate::resources::ResourceList;

const UNDECLARED: &str = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// The mutating half: the pod's overhead from its RuntimeClass. Returns notes, or the refusal
/// text. Classes unknown (`None`) change and refuse nothing.
pub fn set_overhead(pod: &mut Pod, classes: Option<&BTreeMap<String, ResourceList>>) -> Result<Vec<String>, String> {
    let (Some(name), Some(classes)) = (pod.runtime_class_name.clone(), classes) else { return Ok(vec![]) };
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
pub fn validate_overhead(pod: &Pod, classes: Option<&BTreeMap<String, ResourceList>>) -> Result<(), String> {
    if pod.overhead.is_empty() {
        return Ok(());
    }
    let defined = match (&pod.runtime_class_name, classes) {
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
        set_overhead(&mut p, Some(&classes)).unwrap();
        assert_eq!(crate::resources::pretty_print(&p.overhead), "cpu=250m");
        assert_eq!(validate_overhead(&p, Some(&classes)), Ok(()));
        let mut p = Pod { runtime_class_name: Some("gvisor".into()), ..Pod::default() };
        assert_eq!(set_overhead(&mut p, Some(&classes)).unwrap_err(), "pod rejected: RuntimeClass \"gvisor\" not found");
        let mut p = Pod { runtime_class_name: Some("kata".into()), overhead: rl(&[("cpu", "1")]), ..Pod::default() };
        assert_eq!(set_overhead(&mut p, Some(&classes)).unwrap_err(), "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        // An overhead with no class, or a class that defines none: the validating half refuses.
        for class in [None, Some("runc")] {
            let mut p = Pod { runtime_class_name: class.map(str::to_string), overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
            assert_eq!(set_overhead(&mut p, Some(&classes)), Ok(vec![]));
            assert_eq!(validate_overhead(&p, Some(&classes)).unwrap_err(), UNDECLARED, "{class:?}");
        }
        let p = Pod { overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
        assert_eq!(validate_overhead(&p, None).unwrap_err(), UNDECLARED);
    }
}
