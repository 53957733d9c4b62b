//! DefaultStorageClass, a mutating plugin: a claim created with no class at all gets the
//! cluster's default StorageClass.

use std::collections::BTreeMap;

use crate::objects::{Pvc, StorageClassInfo};

/// DefaultStorageClass: a claim with neither the beta annotation nor `storageClassName` gets
/// the default class (the newest default wins; ties go to the first name).
pub fn apply_default_storage_class(pvc: &mut Pvc, annotations: &BTreeMap<String, String>, classes: Option<&[StorageClassInfo]>) -> Vec<String> {
    if pvc.storage_class_name.is_some() || annotations.contains_key("volume.beta.kubernetes.io/storage-class") {
        return vec![];
    }
    let Some(classes) = classes else { return vec![] };
    let mut defaults: Vec<&StorageClassInfo> = classes.iter().filter(|c| c.is_default).collect();
    // Newest creationTimestamp first (RFC 3339 strings sort by time), then name ascending.
    defaults.sort_by(|a, b| b.created.cmp(&a.created).then(a.name.cmp(&b.name)));
    match defaults.first() {
        Some(StorageClassInfo { name, .. }) => {
            pvc.storage_class_name = Some(name.clone());
            vec![format!("DefaultStorageClass: storageClassName={name}")]
        }
        None => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_storage_class_only_for_claims_without_any_class() {
        let class = |name: &str, is_default: bool, created: Option<&str>| StorageClassInfo {
            name: name.to_string(),
            is_default,
            created: created.map(str::to_string),
            allow_volume_expansion: false,
        };
        let classes = vec![class("old", true, Some("2020-01-01T00:00:00Z")), class("new", true, Some("2024-01-01T00:00:00Z")), class("gold", false, None)];
        let none = BTreeMap::new();
        let mut pvc = Pvc::default();
        apply_default_storage_class(&mut pvc, &none, Some(&classes));
        assert_eq!(pvc.storage_class_name.as_deref(), Some("new"));
        let mut explicit_empty = Pvc { storage_class_name: Some(String::new()), ..Pvc::default() };
        apply_default_storage_class(&mut explicit_empty, &none, Some(&classes));
        assert_eq!(explicit_empty.storage_class_name.as_deref(), Some(""));
        let annotated: BTreeMap<String, String> = [("volume.beta.kubernetes.io/storage-class".to_string(), String::new())].into();
        let mut pvc = Pvc::default();
        apply_default_storage_class(&mut pvc, &annotated, Some(&classes));
        assert_eq!(pvc.storage_class_name, None);
    }
}
