//! Priority, a mutating plugin: a pod's `priorityClassName` names an existing PriorityClass
//! (or one of the two every cluster has), and an empty one takes the global default, if any.
//! A name no PriorityClass has is refused in this half (403, after `is forbidden: `).

use std::collections::BTreeMap;

use crate::objects::Pod;

/// PriorityClasses every cluster has.
pub const SYSTEM_PRIORITY_CLASSES: &[&str] = &["system-node-critical", "system-cluster-critical"];

/// The Priority plugin: fills an empty class from the global default, refuses unknown names.
/// Returns notes, or the refusal text.
pub fn apply_priority(pod: &mut Pod, classes: Option<&BTreeMap<String, (bool, i32)>>) -> Result<Vec<String>, String> {
    let Some(classes) = classes else {
        return Ok(vec![]);
    };
    if pod.priority_class_name.is_empty() {
        // When several classes claim to be the global default (a race the API allows), the
        // plugin takes the one with the lowest value.
        let default = classes.iter().filter(|(_, (g, _))| *g).min_by_key(|(_, (_, v))| *v).map(|(n, _)| n.clone());
        if let Some(name) = default {
            pod.priority_class_name = name.clone();
            return Ok(vec![format!("Priority: priorityClassName={name} (the global default PriorityClass)")]);
        }
        return Ok(vec![]);
    }
    if classes.contains_key(&pod.priority_class_name) || SYSTEM_PRIORITY_CLASSES.contains(&pod.priority_class_name.as_str()) {
        return Ok(vec![]);
    }
    Err(format!("no PriorityClass with name {} was found", pod.priority_class_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_defaults_and_refusals() {
        let classes: BTreeMap<String, (bool, i32)> =
            [("low".to_string(), (false, 1)), ("std".to_string(), (true, 10)), ("top".to_string(), (true, 100))].into();
        let mut p = Pod::default();
        apply_priority(&mut p, Some(&classes)).unwrap();
        assert_eq!(p.priority_class_name, "std");
        let mut p = Pod { priority_class_name: "nope".into(), ..Pod::default() };
        assert_eq!(apply_priority(&mut p, Some(&classes)).unwrap_err(), "no PriorityClass with name nope was found");
        let mut p = Pod { priority_class_name: "system-node-critical".into(), ..Pod::default() };
        assert!(apply_priority(&mut p, Some(&classes)).is_ok());
        let no_default: BTreeMap<String, (bool, i32)> = [("low".to_string(), (false, 1))].into();
        let mut p = Pod::default();
        apply_priority(&mut p, Some(&no_default)).unwrap();
        assert_eq!(p.priority_class_name, "");
    }
}
