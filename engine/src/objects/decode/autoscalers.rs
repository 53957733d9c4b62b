//! Autoscalers: an HPA, KEDA's ScaledObject and ScaledJob, and a VerticalPodAutoscaler.

use super::workloads::job_pods;
use super::*;

impl Doc<'_> {
    /// An HPA (any autoscaling version: the fields read are the same) or a KEDA ScaledObject
    /// or ScaledJob, with the defaults its API or operator gives.
    pub(super) fn autoscaler(&self, kind: AutoscalerKind) -> FieldResult<(Meta, Body)> {
        let m = self.generic_meta()?;
        let v = self.v;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        let keda = kind != AutoscalerKind::HorizontalPodAutoscaler;
        let count = |field: &str, at: &str| -> FieldResult<Option<i32>> { count_at(v, at, field) };
        let (min_field, max_field) = if keda { ("minReplicaCount", "maxReplicaCount") } else { ("minReplicas", "maxReplicas") };
        let min = count(min_field, "spec")?.unwrap_or(if keda { 0 } else { 1 });
        let max = count(max_field, "spec")?.unwrap_or(if keda { 100 } else { 0 });
        let target = spec.get("scaleTargetRef").filter(|_| kind != AutoscalerKind::ScaledJob).map(|t| {
            let text = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
            let kind_written = text("kind");
            ScaleTarget {
                api_version: text("apiVersion"),
                kind: if kind_written.is_empty() && keda { "Deployment".into() } else { kind_written },
                name: text("name"),
            }
        });
        let job = match (kind, spec.get("jobTargetRef")) {
            (AutoscalerKind::ScaledJob, Some(j)) => {
                let mut job: k8s_openapi::api::batch::v1::JobSpec =
                    typed(j).map_err(|(p, e)| (format!("spec.jobTargetRef{}{p}", if p.is_empty() { "" } else { "." }), e))?;
                match self.workload(Some(job_pods(&job)), &mut job.template, "spec.jobTargetRef.template", vec![], UpdateStrategy::None)? {
                    Body::Workload(w) => Some(w),
                    _ => None,
                }
            }
            _ => None,
        };
        // An HPA KEDA made carries its ScaledObject as owner.
        let made_for = m.controller.as_ref().filter(|(k, _)| k == "ScaledObject").map(|(_, n)| n.clone());
        let a = Autoscaler {
            kind,
            target,
            min,
            max,
            idle: if keda { count("idleReplicaCount", "spec")? } else { None },
            desired: count("desiredReplicas", "status")?,
            made_for,
            job,
        };
        Ok((m, Body::Autoscaler(Box::new(a))))
    }

    /// A VerticalPodAutoscaler (`autoscaling.k8s.io/v1`): its target, mode, container
    /// policies and the recommendation in its status.
    pub(super) fn vpa(&self) -> FieldResult<(Meta, Body)> {
        let m = self.generic_meta()?;
        let v = self.v;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
        let target = spec.get("targetRef").filter(|t| t.is_object()).map(|t| ScaleTarget {
            api_version: text(t, "apiVersion"),
            kind: text(t, "kind"),
            name: text(t, "name"),
        });
        let mode_written = match spec.get("updatePolicy").and_then(|p| p.get("updateMode")).filter(|m| !m.is_null()) {
            None => String::new(),
            Some(Value::String(m)) => m.clone(),
            // YAML 1.1 reads an unquoted Off as false: the server refuses it as not a string.
            Some(other) => return Err(("spec.updatePolicy.updateMode".into(), format!("must be a string (quote it: \"Off\"), got {other}"))),
        };
        let mode = match mode_written.as_str() {
            // The webhook and updater take a mode left out (or empty) as Recreate.
            "" | "Recreate" => Some(VpaMode::Recreate),
            "Off" => Some(VpaMode::Off),
            "Initial" => Some(VpaMode::Initial),
            "Auto" => Some(VpaMode::Auto),
            "InPlaceOrRecreate" => Some(VpaMode::InPlaceOrRecreate),
            _ => None,
        };
        let list = |at: &Value, field: &str, path: &str| -> FieldResult<ResourceList> {
            let raw: Option<BTreeMap<String, K8sQuantity>> =
                at.get(field).filter(|l| !l.is_null()).map(|l| typed(l).map_err(|(p, e)| (format!("{path}.{field}{p}"), e))).transpose()?;
            resource_list(&raw, &format_args!("{path}.{field}"), false)
        };
        let mut policies = Vec::new();
        let entries = spec.get("resourcePolicy").and_then(|p| p.get("containerPolicies")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (i, p) in entries.iter().enumerate() {
            let path = format!("spec.resourcePolicy.containerPolicies[{i}]");
            policies.push(VpaContainerPolicy {
                container: text(p, "containerName"),
                min_allowed: list(p, "minAllowed", &path)?,
                max_allowed: list(p, "maxAllowed", &path)?,
                requests_only: text(p, "controlledValues") == "RequestsOnly",
            });
        }
        let recommendation = match v.get("status").and_then(|s| s.get("recommendation")).filter(|r| !r.is_null()) {
            None => None,
            Some(r) => {
                let mut out = Vec::new();
                let entries = r.get("containerRecommendations").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                for (i, c) in entries.iter().enumerate() {
                    out.push((text(c, "containerName"), list(c, "target", &format!("status.recommendation.containerRecommendations[{i}]"))?));
                }
                Some(out)
            }
        };
        Ok((m, Body::Vpa(Box::new(Vpa { target, mode, mode_written, policies, recommendation }))))
    }
}

/// A replica count at `at.field` (`spec.maxReplicas`): absent, or an integer that fits an
/// int32, as the API's schema requires.
fn count_at(v: &Value, at: &str, field: &str) -> FieldResult<Option<i32>> {
    let Some(n) = v.get(at).and_then(|s| s.get(field)).filter(|n| !n.is_null()) else { return Ok(None) };
    n.as_i64().and_then(|n| i32::try_from(n).ok()).map(Some).ok_or_else(|| (format!("{at}.{field}"), format!("expected an integer (int32), got {n}")))
}
