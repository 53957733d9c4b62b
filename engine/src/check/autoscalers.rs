//! The autoscalers' replays, beside the other controllers': the replicas an HPA or a KEDA
//! ScaledObject sets and how many of its maximum quota lets run (its ceiling), the Jobs of a
//! ScaledJob, the requests a VerticalPodAutoscaler's webhook writes into new pods and how many
//! running pods come back at its target, and an autoscaler sent on its own, answered for the
//! target it acts on. The rules of each kind (bounds, defaults, which VPA acts) are in
//! [`crate::autoscaling`]; this room replays them on the state as the controllers would.

use super::replay::{admit_workload_pods, pod_charge};
use super::{Checker, DocumentReport, Key};
use crate::autoscaling::{self, Ceiling, StoppedBy, VpaCeiling};
use crate::objects::{Autoscaler, AutoscalerKind, Body, Object, Vpa, VpaMode, Workload};

/// What stops an autoscaled workload's pods, from the first refusal they meet.
pub(super) fn stopped_by(r: Option<crate::admission::Refusal>) -> StoppedBy {
    r.map(|r| StoppedBy { quota: r.quota, resources: r.resources, message: Some(r.message) }).unwrap_or_default()
}

/// The kinds whose replica count an autoscaler sets (through their scale subresource).
pub(super) const SCALABLE: [&str; 4] = ["Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"];

impl Checker<'_> {
    /// The autoscaler that targets the workload `obj` in `ns`: the input's first (it is applied
    /// with the workload), then the state's; a note when several would act.
    pub(super) fn autoscaler_of(&self, obj: &Object, ns: &str) -> (Option<(String, Autoscaler)>, Option<String>) {
        let (group, kind, name) = (obj.type_info.group.as_str(), obj.type_info.kind.as_str(), obj.meta.name.as_str());
        let mut found: Vec<(&str, &Autoscaler)> = self
            .input_autoscalers
            .get(ns)
            .into_iter()
            .flatten()
            .map(|(n, a)| (n.as_str(), a))
            .filter(|(_, a)| autoscaling::targets(a, group, kind, name))
            .collect();
        for (n, a) in self.state.autoscalers_of(ns, obj) {
            if !found.iter().any(|(m, b)| *m == n && b.kind == a.kind) {
                found.push((n, a));
            }
        }
        let (one, note) = autoscaling::the_one(&found);
        (one.map(|(n, a)| (n.to_string(), a)), note)
    }

    /// Replicas as the cluster will run them: an autoscaler's count where one targets the
    /// workload, the live count where the manifest leaves `replicas` out, else the
    /// manifest's. Returns the autoscaler, whose ceiling is worked out once the pods are.
    pub(super) fn scale(&self, obj: &mut Object, existing: Option<&Object>, ns: &str, report: &mut DocumentReport) -> Option<(String, Autoscaler)> {
        if !report.allowed || !SCALABLE.contains(&obj.type_info.kind.as_str()) {
            return None;
        }
        let (by, note) = self.autoscaler_of(obj, ns);
        let Body::Workload(w) = &mut obj.body else { return None };
        let written = w.counts.iter().find(|(p, _)| p == "spec.replicas").map(|(_, n)| i32::try_from((*n).max(0)).unwrap_or(i32::MAX));
        let live = match existing.map(|e| &e.body) {
            Some(Body::Workload(old)) => old.replicas,
            _ => None,
        };
        let scaled = autoscaling::replicas(written, live, by.as_ref().map(|(n, a)| (n.as_str(), a)));
        w.replicas = Some(scaled.replicas);
        report.notes.extend(note);
        report.notes.extend(scaled.why);
        by
    }

    /// How many of its autoscaler's maximum the workload can run: its pods past the ones it
    /// runs now, replayed on a copy of the state as charged so far.
    pub(super) fn ceiling(&self, obj: &Object, w: &Workload, name: &str, a: &Autoscaler, ns: &str, report: &DocumentReport) -> Ceiling {
        let running = report.replicas_admitted.unwrap_or(0);
        let mut c = Ceiling {
            autoscaler_kind: a.kind,
            autoscaler: name.to_string(),
            target: format!("{}/{}", obj.type_info.kind.to_lowercase(), obj.meta.name),
            min_replicas: a.min,
            max_replicas: a.max,
            replicas: w.replicas.unwrap_or(0),
            fits: running.min(a.max),
            stopped: StoppedBy::default(),
        };
        if a.max > running {
            let at_max = Workload { replicas: Some(a.max), ..w.clone() };
            let mut scratch = self.state.scratch_for(ns);
            let out = admit_workload_pods(obj, &at_max, Some(running), &mut scratch, ns, self.opts, self.each_replica);
            c.fits = out.admitted.min(a.max);
            c.stopped = stopped_by(out.first_refusal);
        }
        c
    }

    /// An autoscaler sent on its own: what it does at once to a target that exists (the HPA
    /// controller moves it into [min, max] before reading any metric), charged like the
    /// target's own scale-up, and its ceiling. A target in the input answers for itself.
    pub(super) fn autoscaler_target(&mut self, obj: &Object, a: &Autoscaler, ns: &str, report: &mut DocumentReport) {
        let name = obj.meta.name.as_str();
        let who = format!("{} {name}", a.kind.short());
        if a.made_for.is_some() {
            return;
        }
        let Some(t) = &a.target else {
            if let (AutoscalerKind::ScaledJob, Some(job)) = (a.kind, &a.job) {
                report.autoscaling = Some(self.scaled_job_ceiling(obj, a, job, ns, report));
            } else if a.kind == AutoscalerKind::ScaledJob {
                report.notes.push(format!("{who} creates up to {} Jobs at once from its template; their pods are not replayed here", a.max));
            } else {
                report.notes.push(format!("{who} has no scaleTargetRef: it scales nothing"));
            }
            return;
        };
        if !SCALABLE.contains(&t.kind.as_str()) {
            report.notes.push(format!(
                "{who} targets {}/{}: a kind whose pods this tool does not replay (it replays Deployments, StatefulSets, ReplicaSets and ReplicationControllers)",
                t.kind, t.name
            ));
            return;
        }
        let Some((key, target)) = self.target_of(t, ns, &who, "it scales nothing", report) else { return };
        let Body::Workload(old) = &target.body else { return };
        let (by, note) = self.autoscaler_of(&target, ns);
        let acting = by.filter(|(n, b)| n == name && b.kind == a.kind).unwrap_or_else(|| (name.to_string(), a.clone()));
        report.notes.extend(note);
        let scaled = autoscaling::replicas(None, old.replicas, Some((acting.0.as_str(), &acting.1)));
        report.notes.extend(scaled.why);
        let w = Workload { replicas: Some(scaled.replicas), ..(**old).clone() };
        report.replicas_existing = Some(old.current.or(old.replicas).unwrap_or(0));
        self.workload_pods(&target, &w, 0, false, ns, &key, report);
        report.autoscaling = Some(self.ceiling(&target, &w, &acting.0, &acting.1, ns, report));
        if let Some(Body::Workload(stored)) = self.state.existing.get_mut(&key).map(|o| &mut o.body) {
            stored.replicas = Some(scaled.replicas);
            stored.current = report.replicas_admitted.or(stored.current);
        }
    }

    /// The VerticalPodAutoscaler whose webhook writes the requests of the workload's new pods
    /// (the input's, then the state's; of several, the earliest created), set on the workload
    /// so that every pod replayed for it gets the VPA's target; notes for the VPAs that change
    /// nothing.
    pub(super) fn vpa_of(&self, obj: &mut Object, existing: Option<&Object>, ns: &str, report: &mut DocumentReport) {
        if !report.allowed || !matches!(obj.body, Body::Workload(_)) {
            return;
        }
        let (group, kind, name) = (obj.type_info.group.as_str(), obj.type_info.kind.as_str(), obj.meta.name.as_str());
        let mut found: Vec<(String, String, Vpa)> = self
            .input_vpas
            .get(ns)
            .into_iter()
            .flatten()
            .filter(|(_, _, v)| v.target.as_ref().is_some_and(|t| autoscaling::names(t, group, kind, name)))
            .cloned()
            .collect();
        for (n, created, v) in self.state.vpas_of(ns, obj) {
            if !found.iter().any(|(m, _, _)| m == n) {
                found.push((n.to_string(), created.to_string(), v.clone()));
            }
        }
        for (n, _, v) in &found {
            if v.mode == Some(VpaMode::Off) {
                report.notes.push(format!("VPA {n} is in updateMode Off: it changes no pod (its recommendation is advice only)"));
            }
        }
        let Some((n, v)) = autoscaling::acting_vpa(found.iter().map(|(n, c, v)| (n.as_str(), c.as_str(), v))).map(|(n, v)| (n.to_string(), v.clone())) else {
            return;
        };
        let Body::Workload(w) = &mut obj.body else { return };
        match &v.recommendation {
            None => report.notes.push(format!("VPA {n} has no recommendation yet: new pods keep the template's requests until its recommender writes one")),
            Some(r) if !w.template.containers.iter().any(|c| r.iter().any(|(rc, _)| *rc == c.name)) => {
                report.notes.push(format!("VPA {n}'s recommendation names no container of the pod template: its webhook changes nothing"))
            }
            Some(_) => {
                let running = match existing.map(|e| &e.body) {
                    Some(Body::Workload(old)) => old.current.or(old.replicas).unwrap_or(0),
                    _ => 0,
                };
                if running > 0 && v.mode.is_some_and(|m| !m.changes_running_pods()) {
                    report.notes.push(format!("VPA {n} (updateMode Initial) writes its target into new pods only: the {running} running keep their requests"));
                }
            }
        }
        w.vpa = Some((n, Box::new(v)));
    }

    /// How many of the workload's running pods quota lets come back at its VPA's target, in a
    /// mode that evicts (or resizes) them: on a copy of the state, the running pods' charges
    /// are given back and as many pods as ran are created again through the VPA's webhook.
    pub(super) fn vpa_ceiling(&self, obj: &Object, w: &Workload, ns: &str, report: &mut DocumentReport) -> Option<VpaCeiling> {
        let (name, vpa) = w.vpa.as_ref()?;
        let mode = vpa.mode.filter(|m| m.changes_running_pods())?;
        vpa.recommendation.as_ref()?;
        let pods = report.replicas_existing?.min(w.replicas.unwrap_or(i32::MAX));
        if pods <= 0 {
            return None;
        }
        let as_they_are = Workload { vpa: None, ..w.clone() };
        let held = self.state.pods_of(ns, &obj.type_info.kind, &obj.meta.name);
        let charges: Vec<_> = if held.is_empty() {
            report.notes.push(format!("the {pods} running pods are taken at the template's requests (the state holds none of them): a live check reads them"));
            let one = pod_charge(obj, &as_they_are, Body::Pod(w.template.clone()), format!("{}-running", obj.meta.name), self.state, ns, self.opts).ok()?;
            vec![one; usize::try_from(pods).unwrap_or(0)]
        } else {
            held.iter().filter_map(|p| pod_charge(obj, &as_they_are, p.body.clone(), p.meta.name.clone(), self.state, ns, self.opts).ok()).collect()
        };
        let mut scratch = self.state.scratch_for(ns);
        for q in scratch.quotas.values_mut().flatten() {
            for c in charges.iter().filter_map(|c| c.get(&q.name)) {
                q.quota.status_used = crate::resources::subtract_non_negative(&q.quota.status_used, c);
            }
        }
        let again = Workload { replicas: Some(pods), ..w.clone() };
        let out = admit_workload_pods(obj, &again, Some(0), &mut scratch, ns, self.opts, self.each_replica);
        let stopped = stopped_by(out.first_refusal);
        let usage = out.explained.map(|e| e.usage).unwrap_or_default();
        let shown: Vec<String> =
            if stopped.resources.is_empty() { ["requests.cpu", "requests.memory"].iter().map(|r| r.to_string()).collect() } else { stopped.resources.clone() };
        let per_pod = shown.iter().filter_map(|r| usage.get(r).map(|q| format!("{r}={}", q.to_canonical()))).collect();
        Some(VpaCeiling { vpa: name.clone(), target: obj.display_name(), mode, pods, fits: out.admitted.min(pods), per_pod, stopped })
    }

    /// The existing object an autoscaler sent on its own acts on, with its key: `None` when a
    /// document names it (it answers for itself) or when it exists nowhere (a note says that
    /// `who` does nothing, in the words `nothing`, until it does).
    pub(super) fn target_of(&self, t: &crate::objects::ScaleTarget, ns: &str, who: &str, nothing: &str, report: &mut DocumentReport) -> Option<(Key, Object)> {
        let api_version = match (t.api_version.as_str(), t.kind.as_str()) {
            ("", "ReplicationController") => "v1",
            ("", _) => "apps/v1",
            (written, _) => written,
        };
        let key = (ns.to_string(), crate::objects::type_info(api_version, &t.kind).group_resource(), t.name.clone());
        if self.input_keys.contains(&key) {
            return None;
        }
        let Some(target) = self.state.existing.get(&key).cloned() else {
            report.notes.push(format!(
                "{who} targets {}/{}, which is neither in the cluster nor in the manifests: {nothing} until that exists",
                t.kind.to_lowercase(),
                t.name
            ));
            return None;
        };
        Some((key, target))
    }

    /// A VerticalPodAutoscaler sent on its own: what it does to the running pods of a target
    /// that exists. A target in the input answers for itself.
    pub(super) fn vpa_target(&mut self, obj: &Object, v: &Vpa, ns: &str, report: &mut DocumentReport) {
        let who = format!("VPA {}", obj.meta.name);
        let Some(t) = &v.target else {
            report.notes.push(format!("{who} has no targetRef: it changes no pod"));
            return;
        };
        let Some((_, target)) = self.target_of(t, ns, &who, "it changes no pod", report) else { return };
        let Body::Workload(old) = &target.body else {
            report.notes.push(format!("{who} targets {}/{}, whose pods this tool does not replay", t.kind.to_lowercase(), t.name));
            return;
        };
        if v.mode == Some(VpaMode::Off) {
            report.notes.push(format!("{who} is in updateMode Off: it changes no pod (its recommendation is advice only)"));
            return;
        }
        let mut w = (**old).clone();
        w.vpa = Some((obj.meta.name.clone(), Box::new(v.clone())));
        report.replicas_existing = Some(old.current.or(old.replicas).unwrap_or(0));
        report.vpa = self.vpa_ceiling(&target, &w, ns, report);
        if v.recommendation.is_none() {
            report.notes.push(format!("{who} has no recommendation yet: pods keep their requests until its recommender writes one"));
        } else if report.vpa.is_none() && v.mode.is_some_and(|m| !m.changes_running_pods()) {
            report.notes.push(format!("{who} (updateMode Initial) writes its target into new pods only: the running ones keep their requests"));
        }
    }

    /// How many of a ScaledJob's `maxReplicaCount` Jobs can run at once: each Job's pods (its
    /// parallelism, within its completions) replayed for them all on a copy of the state
    /// (nothing is charged). The Job objects themselves are not charged (`count/jobs.batch`).
    pub(super) fn scaled_job_ceiling(&self, obj: &Object, a: &Autoscaler, job: &Workload, ns: &str, report: &mut DocumentReport) -> Ceiling {
        let per_job = job.replicas.unwrap_or(1).max(1);
        let mut jobs = obj.clone();
        jobs.type_info = crate::objects::type_info("batch/v1", "Job");
        let all = Workload { replicas: Some(a.max.max(0).saturating_mul(per_job)), ..job.clone() };
        let mut scratch = self.state.scratch_for(ns);
        let out = admit_workload_pods(&jobs, &all, None, &mut scratch, ns, self.opts, self.each_replica);
        report.notes.push(format!(
            "ScaledJob {} runs up to {} Jobs at once, {per_job} pod(s) each: their pods are replayed on the quotas as they are (the Job objects themselves, count/jobs.batch, are not)",
            obj.meta.name, a.max
        ));
        Ceiling {
            autoscaler_kind: a.kind,
            autoscaler: obj.meta.name.clone(),
            target: "its Jobs".into(),
            min_replicas: a.min,
            max_replicas: a.max,
            replicas: 0,
            fits: (out.admitted / per_job).min(a.max),
            stopped: stopped_by(out.first_refusal),
        }
    }
}
