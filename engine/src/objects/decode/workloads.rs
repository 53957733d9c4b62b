//! Workloads (apps and batch): the template as the pods their controller creates, replicas,
//! update strategy, what exists of them already.

use super::core_kinds::pvc;
use super::pod::{lean_pod_spec, TakenVolumes};
use super::*;

/// The template's pods and metadata, its metadata taken over (not copied: a template's
/// labels can be most of a 3 MiB object).
fn workload_template(t: &mut core::PodTemplateSpec, path: &str, taken: Option<TakenContainers>, volumes: Option<TakenVolumes>) -> FieldResult<(Pod, Meta)> {
    let spec = t.spec.as_ref().ok_or_else(|| (format!("{path}.spec"), "Required value".to_string()))?;
    let pod = lean_pod_spec(spec, &format!("{path}.spec"), taken, volumes)?;
    Ok((pod, t.metadata.take().map(meta).unwrap_or_default()))
}

impl Doc<'_> {
    pub(super) fn apps(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        use k8s_openapi::api::apps::v1 as apps;
        Ok(match kind {
            "Deployment" => {
                let d: apps::Deployment = typed(self.v)?;
                let mut spec = d.spec;
                let st = spec.strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("Recreate") {
                    UpdateStrategy::Recreate
                } else {
                    let ru = st.rolling_update.unwrap_or_default();
                    rolling_update(&ru.max_surge, &ru.max_unavailable, IntOrPercent::Percent(25), IntOrPercent::Percent(25))
                };
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &mut spec.template, "spec.template", vec![], strategy)?)
            }
            "ReplicaSet" => {
                let d: apps::ReplicaSet = typed(self.v)?;
                let spec = d.spec;
                let mut t = spec.template.ok_or_else(|| ("spec.template".to_string(), "Required value".to_string()))?;
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &mut t, "spec.template", vec![], UpdateStrategy::None)?)
            }
            "StatefulSet" => {
                let d: apps::StatefulSet = typed(self.v)?;
                let mut spec = d.spec;
                let claims = spec
                    .volume_claim_templates
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, c)| Ok((c.metadata.name.clone().unwrap_or_default(), pvc(&c.spec, &None, &format!("spec.volumeClaimTemplates[{i}].spec"))?)))
                    .collect::<FieldResult<Vec<_>>>()?;
                let st = spec.update_strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("OnDelete") {
                    UpdateStrategy::OnDelete
                } else {
                    UpdateStrategy::Ordered { partition: st.rolling_update.and_then(|r| r.partition).unwrap_or(0) }
                };
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &mut spec.template, "spec.template", claims, strategy)?)
            }
            "DaemonSet" => {
                let d: apps::DaemonSet = typed(self.v)?;
                let mut spec = d.spec;
                let st = spec.update_strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("OnDelete") {
                    UpdateStrategy::OnDelete
                } else {
                    let ru = st.rolling_update.unwrap_or_default();
                    rolling_update(&ru.max_surge, &ru.max_unavailable, IntOrPercent::Int(0), IntOrPercent::Int(1))
                };
                (meta(d.metadata), self.workload(None, &mut spec.template, "spec.template", vec![], strategy)?)
            }
            _ => self.other()?,
        })
    }

    pub(super) fn batch(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        use k8s_openapi::api::batch::v1 as batch;
        Ok(match kind {
            "Job" => {
                let j: batch::Job = typed(self.v)?;
                let mut spec = j.spec.unwrap_or_default();
                (meta(j.metadata), self.workload(Some(job_pods(&spec)), &mut spec.template, "spec.template", vec![], UpdateStrategy::None)?)
            }
            "CronJob" => {
                let mut c: batch::CronJob = typed(self.v)?;
                let mut job = c.spec.job_template.spec.take().unwrap_or_default();
                (meta(c.metadata), self.workload(Some(job_pods(&job)), &mut job.template, "spec.jobTemplate.spec.template", vec![], UpdateStrategy::None)?)
            }
            _ => self.other()?,
        })
    }

    /// A workload: its template decoded as the pods its controller creates (`path` is the
    /// template's field path), and what the rest of the engine reads of its spec and status.
    pub(super) fn workload(
        &self,
        replicas: Option<i32>,
        t: &mut core::PodTemplateSpec,
        path: &str,
        claims: Vec<(String, Pvc)>,
        update_strategy: UpdateStrategy,
    ) -> FieldResult<Body> {
        let (ti, v) = (self.ti, self.v);
        let mut taken = self.taken.take();
        let taken_images = taken.as_mut().map(|t| std::mem::take(&mut t.images));
        let (template, template_meta) = workload_template(t, path, taken, self.volumes.take())?;
        let spec_path = path.strip_suffix(".template").unwrap_or("spec");
        let spec = if spec_path == "spec" { v.get("spec") } else { v.get("spec").and_then(|s| s.get("jobTemplate")).and_then(|j| j.get("spec")) };
        let counts = ["replicas", "parallelism", "completions"].iter().filter_map(|f| Some((format!("{spec_path}.{f}"), spec?.get(*f)?.as_i64()?))).collect();
        let images = taken_images.unwrap_or_else(|| {
            t.spec
                .as_ref()
                .into_iter()
                .flat_map(|s| s.init_containers.iter().flatten().chain(s.containers.iter()))
                .map(|c| format!("{}={}", c.name, c.image.clone().unwrap_or_default()))
                .collect()
        });
        Ok(Body::Workload(Box::new(Workload {
            replicas,
            template,
            template_meta,
            volume_claim_templates: claims,
            template_path: path.into(),
            counts,
            update_strategy,
            images,
            current: pods_existing(&ti.kind, v),
            succeeded: (ti.kind == "Job")
                .then(|| v.get("status").and_then(|s| s.get("succeeded")).and_then(Value::as_i64))
                .flatten()
                .map_or(0, |n| i32::try_from(n.max(0)).unwrap_or(i32::MAX)),
            restart_policy: t.spec.as_ref().and_then(|s| s.restart_policy.clone()).filter(|p| !p.is_empty()),
            selector: spec.and_then(|s| s.get("selector")).and_then(|sel| workload_selector(&ti.kind, sel)),
            vpa: None,
        })))
    }
}

/// `spec.selector` as a label selector; a ReplicationController's is a plain label map.
fn workload_selector(kind: &str, sel: &Value) -> Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> {
    if kind == "ReplicationController" {
        let labels: BTreeMap<String, String> = serde_json::from_value(sel.clone()).ok()?;
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector { match_labels: Some(labels), match_expressions: None })
    } else {
        serde_json::from_value(sel.clone()).ok()
    }
}

/// A rolling update's surge and unavailability, each defaulted as the kind defaults it.
fn rolling_update(
    max_surge: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    max_unavailable: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    surge_default: IntOrPercent,
    unavailable_default: IntOrPercent,
) -> UpdateStrategy {
    UpdateStrategy::RollingUpdate {
        max_surge: IntOrPercent::from_k8s(max_surge, surge_default),
        max_unavailable: IntOrPercent::from_k8s(max_unavailable, unavailable_default),
    }
}

/// Pods a Job starts at once: parallelism (default 1), capped by completions when set;
/// a suspended Job starts none.
pub(super) fn job_pods(spec: &k8s_openapi::api::batch::v1::JobSpec) -> i32 {
    if spec.suspend == Some(true) {
        return 0;
    }
    let parallelism = spec.parallelism.unwrap_or(1);
    match spec.completions {
        Some(c) => parallelism.min(c),
        None => parallelism,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::decode::tests::one;

    #[test]
    fn job_pods_follow_parallelism_and_completions() {
        let base = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template: {spec: {containers: [{name: a}], restartPolicy: Never}}\n";
        for (extra, want) in [("", 1), ("  parallelism: 5\n", 5), ("  parallelism: 5\n  completions: 2\n", 2), ("  suspend: true\n", 0)] {
            let Body::Workload(w) = one(&format!("{base}{extra}")).unwrap().body else { panic!() };
            assert_eq!(w.replicas, Some(want), "{extra}");
        }
    }
}
