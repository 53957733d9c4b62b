//! The core group's kinds other than Pod: claims, services, quotas, limit ranges,
//! namespaces and replication controllers.

use super::*;

pub(super) fn pvc(spec: &Option<core::PersistentVolumeClaimSpec>, status: &Option<core::PersistentVolumeClaimStatus>, path: &str) -> FieldResult<Pvc> {
    let spec = spec.clone().unwrap_or_default();
    let requests = resource_list(spec.resources.as_ref().map_or(&None, |r| &r.requests), &format_args!("{path}.resources.requests"), true)?;
    let status = status.clone().unwrap_or_default();
    let allocated = resource_list(&status.allocated_resources, &"status.allocatedResources", true)?;
    Ok(Pvc {
        storage_class_name: spec.storage_class_name.clone(),
        storage_request: requests.get("storage").cloned(),
        allocated_storage: allocated.get("storage").cloned(),
        volume_attributes_class_name: spec.volume_attributes_class_name.clone().filter(|s| !s.is_empty()),
        current_volume_attributes_class_name: status.current_volume_attributes_class_name.clone().filter(|s| !s.is_empty()),
        target_volume_attributes_class_name: status
            .modify_volume_status
            .as_ref()
            .and_then(|m| m.target_volume_attributes_class_name.clone())
            .filter(|s| !s.is_empty()),
        bound: status.phase.as_deref() == Some("Bound"),
    })
}

/// Applies the API server's LimitRangeItem defaulting (type Container): default limit from
/// max, default request from default limit, then from min.
fn limit_range_item(item: &core::LimitRangeItem, path: &str) -> FieldResult<LimitRangeItem> {
    let mut out = LimitRangeItem {
        type_: item.type_.clone(),
        default: resource_list(&item.default, &format_args!("{path}.default"), true)?,
        default_request: resource_list(&item.default_request, &format_args!("{path}.defaultRequest"), true)?,
        max: resource_list(&item.max, &format_args!("{path}.max"), true)?,
        min: resource_list(&item.min, &format_args!("{path}.min"), true)?,
        max_limit_request_ratio: resource_list(&item.max_limit_request_ratio, &format_args!("{path}.maxLimitRequestRatio"), true)?,
    };
    if out.type_ == "Container" {
        for (k, v) in &out.max {
            out.default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &out.default {
            out.default_request.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &out.min {
            out.default_request.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Ok(out)
}

fn quota(rq: core::ResourceQuota) -> FieldResult<ResourceQuota> {
    let spec = rq.spec.clone().unwrap_or_default();
    let status = rq.status.clone().unwrap_or_default();
    Ok(ResourceQuota {
        spec_hard: resource_list(&spec.hard, &"spec.hard", true)?,
        scopes: spec.scopes.clone().unwrap_or_default(),
        scope_selector: spec.scope_selector.as_ref().map(|s| {
            s.match_expressions
                .iter()
                .flatten()
                .map(|e| ScopeRequirement { scope_name: e.scope_name.clone(), operator: e.operator.clone(), values: e.values.clone().unwrap_or_default() })
                .collect()
        }),
        has_status: status.hard.is_some(),
        status_hard: resource_list(&status.hard, &"status.hard", true)?,
        status_used: resource_list(&status.used, &"status.used", true)?,
        raw: Some(Box::new(rq)),
    })
}

impl Doc<'_> {
    /// The core group's other kinds.
    pub(super) fn core(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        Ok(match kind {
            "PersistentVolumeClaim" => {
                let p: core::PersistentVolumeClaim = typed(self.v)?;
                (meta(p.metadata), Body::PersistentVolumeClaim(pvc(&p.spec, &p.status, "spec")?))
            }
            "Service" => {
                let s: core::Service = typed(self.v)?;
                let spec = s.spec.unwrap_or_default();
                let svc = Service {
                    type_: spec.type_.clone().unwrap_or_else(|| "ClusterIP".into()),
                    node_ports: spec.ports.iter().flatten().map(|p| p.node_port).collect(),
                    allocate_load_balancer_node_ports: spec.allocate_load_balancer_node_ports,
                };
                (meta(s.metadata), Body::Service(svc))
            }
            "ResourceQuota" => {
                let rq: core::ResourceQuota = typed(self.v)?;
                // The raw quota, metadata included, is kept for validation.
                let m = meta(rq.metadata.clone());
                (m, Body::ResourceQuota(Box::new(quota(rq)?)))
            }
            "LimitRange" => {
                let lr: core::LimitRange = typed(self.v)?;
                let items = lr
                    .spec
                    .iter()
                    .flat_map(|s| s.limits.iter())
                    .enumerate()
                    .map(|(i, item)| limit_range_item(item, &format!("spec.limits[{i}]")))
                    .collect::<FieldResult<Vec<_>>>()?;
                (meta(lr.metadata), Body::LimitRange(items))
            }
            "Namespace" => {
                // The server refuses creates by the phase alone; a deleted namespace has it.
                let phase = self.v.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str);
                let deleted = self.v.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null());
                (self.generic_meta()?, Body::Namespace { terminating: phase == Some("Terminating") || deleted })
            }
            "ReplicationController" => {
                let rc: core::ReplicationController = typed(self.v)?;
                let spec = rc.spec.unwrap_or_default();
                let mut t = spec.template.ok_or_else(|| ("spec.template".to_string(), "Required value".to_string()))?;
                (meta(rc.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &mut t, "spec.template", vec![], UpdateStrategy::None)?)
            }
            _ => self.other()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::decode::tests::one;

    #[test]
    fn limit_range_items_get_server_defaults() {
        let obj =
            one("apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec: {limits: [{type: Container, max: {cpu: '2'}, min: {memory: 64Mi}}]}\n").unwrap();
        let Body::LimitRange(items) = obj.body else { panic!() };
        assert_eq!(items[0].default["cpu"].to_string(), "2");
        assert_eq!(items[0].default_request["cpu"].to_string(), "2");
        assert_eq!(items[0].default_request["memory"].to_string(), "64Mi");
    }
}
