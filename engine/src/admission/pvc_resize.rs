//! PersistentVolumeClaimResize, a validating plugin (after LimitRanger, before quota): a
//! claim update that asks for more storage is refused unless the claim is bound and its
//! StorageClass allows expansion.

use crate::objects::{Body, Object, Pvc, StorageClassInfo};
use crate::quantity::Quantity;

/// A claim whose requested storage grows must be bound, and of a class (the beta annotation
/// `volume.beta.kubernetes.io/storage-class`, else `spec.storageClassName`), the same before and
/// after, whose StorageClass sets `allowVolumeExpansion: true`. The refusal's message (403,
/// after `is forbidden: `), or `None`. Unknown classes (`classes` is `None`) refuse nothing:
/// `check` says then that it cannot decide (see `check::gaps`).
pub fn resize_refusal(old: &Object, new: &Object, classes: Option<&[StorageClassInfo]>) -> Option<String> {
    let (Body::PersistentVolumeClaim(o), Body::PersistentVolumeClaim(n)) = (&old.body, &new.body) else { return None };
    if !pvc_grows(o, n) {
        return None;
    }
    if !o.bound {
        return Some("Only bound persistent volume claims can be expanded".into());
    }
    // A manifest that names no class keeps the stored one (what `kubectl apply` sends).
    let old_class = o.class(&old.meta.annotations).unwrap_or("");
    let class = n.class(&new.meta.annotations).unwrap_or(old_class);
    let allowed = !class.is_empty()
        && class == old_class
        && match classes {
            None => return None,
            Some(classes) => classes.iter().any(|c| c.name == class && c.allow_volume_expansion),
        };
    (!allowed).then(|| "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize".into())
}

/// Whether an update asks for more storage than the claim had (absent is zero).
pub fn pvc_grows(old: &Pvc, new: &Pvc) -> bool {
    let zero = Quantity::zero();
    new.storage_request.as_ref().unwrap_or(&zero) > old.storage_request.as_ref().unwrap_or(&zero)
}
