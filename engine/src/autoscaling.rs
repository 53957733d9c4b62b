//! Autoscalers: the replica count a workload runs when a HorizontalPodAutoscaler (or KEDA,
//! through the HPA it makes) decides it, and the words for how far quota lets it scale.
//!
//! The rules, as kube-controller-manager's HPA controller applies them before it reads any
//! metric (`reconcileAutoscaler` in k8s.io/kubernetes pkg/controller/podautoscaler):
//! a target scaled to 0 while `minReplicas` is above 0 is left alone (scaling disabled); a
//! count above `maxReplicas` is lowered to it; one below `minReplicas` is raised to it. With
//! metrics the count moves between the two. So the count a workload runs is the autoscaler's
//! current wish (`status.desiredReplicas`, else the workload's live count, else what the
//! manifest asks for a new one) held within [min, max].
//!
//! ```
//! use kubectl_quota_engine::autoscaling::{replicas, Scaled};
//! use kubectl_quota_engine::objects::{Autoscaler, AutoscalerKind, ScaleTarget};
//!
//! let hpa = Autoscaler {
//!     kind: AutoscalerKind::HorizontalPodAutoscaler,
//!     target: Some(ScaleTarget { api_version: "apps/v1".into(), kind: "Deployment".into(), name: "web".into() }),
//!     min: 12, max: 20, idle: None, desired: None, made_for: None, job: None,
//! };
//! // A Deployment running 5 pods: the HPA raises it to its minimum at once.
//! let s: Scaled = replicas(Some(5), Some(5), Some(("web", &hpa)));
//! assert_eq!(s.replicas, 12);
//! assert!(s.why.unwrap().starts_with("HPA web sets the replicas to 12"));
//! ```

use crate::objects::{Autoscaler, AutoscalerKind, ScaleTarget, Vpa, VpaMode};

/// A workload's replica count as the cluster will run it, and why when it is not the
/// manifest's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaled {
    pub replicas: i32,
    pub why: Option<String>,
}

/// Whether `a` scales the workload `kind`/`name` of API group `group`. A target that names no
/// apiVersion matches any group (KEDA defaults it to `apps/v1`).
pub fn targets(a: &Autoscaler, group: &str, kind: &str, name: &str) -> bool {
    a.target.as_ref().is_some_and(|t| names(t, group, kind, name))
}

/// Whether the reference `t` (an autoscaler's target) names the workload `kind`/`name` of API
/// group `group`; a reference without an apiVersion names any group's.
pub fn names(t: &ScaleTarget, group: &str, kind: &str, name: &str) -> bool {
    let target_group = t.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    t.kind == kind && t.name == name && (t.api_version.is_empty() || target_group == group || (group == "extensions" && target_group == "apps"))
}

/// The replica count of a workload: `written` is its manifest's `spec.replicas` (`None` when
/// left out), `live` the count of the workload as it exists (`None` for a new one), `by` the
/// autoscaler (its name) that targets it, if any.
pub fn replicas(written: Option<i32>, live: Option<i32>, by: Option<(&str, &Autoscaler)>) -> Scaled {
    let Some((name, a)) = by else {
        return match (written, live) {
            (None, Some(l)) => Scaled {
                replicas: l,
                why: Some(format!("replicas is not in the manifest: the {l} the workload runs now are kept (kubectl apply leaves the field as it is)")),
            },
            (w, _) => Scaled { replicas: w.unwrap_or(1), why: None },
        };
    };
    let who = format!("{} {name}", a.kind.short());
    // The count the autoscaler starts from: its own wish, the live count, or the manifest's.
    let (current, from) = match (a.desired, live, written) {
        (Some(d), _, _) => (d, "its desired count"),
        (None, Some(l), _) => (l, "the running count"),
        (None, None, Some(w)) => (w, "the manifest's count"),
        (None, None, None) => (1, "the default count"),
    };
    if a.kind == AutoscalerKind::HorizontalPodAutoscaler && live == Some(0) && a.min > 0 {
        return Scaled { replicas: 0, why: Some(format!("{who} leaves the workload at 0: an HPA does not scale a target scaled to 0 (scaling is disabled)")) };
    }
    if a.max < a.min.max(1) {
        return Scaled {
            replicas: written.or(live).unwrap_or(1),
            why: Some(format!(
                "{who} has maxReplicas {} below minReplicas {} (or below 1): the API server refuses such an autoscaler, and its count is not used",
                a.max, a.min
            )),
        };
    }
    let replicas = current.clamp(a.min, a.max);
    let why = if replicas > current {
        format!("{who} sets the replicas to {replicas}: its minimum raises {from} ({current})")
    } else if replicas < current {
        format!("{who} sets the replicas to {replicas}: its maximum lowers {from} ({current})")
    } else {
        format!("{who} sets the replicas to {replicas} ({from}, between its minimum {} and maximum {})", a.min, a.max)
    };
    Scaled { replicas, why: Some(why) }
}

/// Of several autoscalers that target one workload, the one that acts: an HPA KEDA made for a
/// ScaledObject stands for it only when the ScaledObject itself is not known (its desired
/// count passes to the ScaledObject otherwise). The rest are named in a note: the HPA
/// controller refuses to act on a workload two HPAs select.
pub fn the_one<'a>(found: &[(&'a str, &'a Autoscaler)]) -> (Option<(&'a str, Autoscaler)>, Option<String>) {
    let known = |so: &str| found.iter().any(|(n, a)| *n == so && a.kind == AutoscalerKind::ScaledObject);
    let acting: Vec<&(&str, &Autoscaler)> = found.iter().filter(|(_, a)| a.made_for.as_deref().is_none_or(|so| !known(so))).collect();
    let Some((name, first)) = acting.first() else { return (None, None) };
    let mut chosen = (*first).clone();
    if chosen.kind == AutoscalerKind::ScaledObject && chosen.desired.is_none() {
        chosen.desired = found.iter().find(|(_, a)| a.made_for.as_deref() == Some(*name)).and_then(|(_, a)| a.desired);
    }
    let note = (acting.len() > 1).then(|| {
        let names: Vec<String> = acting.iter().map(|(n, a)| format!("{} {n}", a.kind.short())).collect();
        format!(
            "{} autoscalers target this workload ({}): the HPA controller does not scale a workload that several HPAs select; the first is used here",
            acting.len(),
            names.join(", ")
        )
    });
    (Some((name, chosen)), note)
}

/// Of the VerticalPodAutoscalers that target one workload, (name, creation time, object), the
/// one whose webhook writes its pods: of those not `Off`, the earliest created, then the first
/// by name, as the webhook picks.
pub fn acting_vpa<'a, I>(found: I) -> Option<(&'a str, &'a Vpa)>
where
    I: IntoIterator<Item = (&'a str, &'a str, &'a Vpa)>,
{
    found.into_iter().filter(|(_, _, v)| v.mode != Some(VpaMode::Off)).min_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0))).map(|(n, _, v)| (n, v))
}

/// How far quota lets an autoscaled workload scale.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ceiling {
    /// `HorizontalPodAutoscaler`, `ScaledObject` or `ScaledJob`.
    pub autoscaler_kind: AutoscalerKind,
    pub autoscaler: String,
    /// `deployment/web`.
    pub target: String,
    pub min_replicas: i32,
    pub max_replicas: i32,
    /// The pods it runs now, as the cluster will run them.
    pub replicas: i32,
    /// Of `max_replicas`, how many pods the quotas let run.
    pub fits: i32,
    /// What stops it below its maximum.
    #[serde(flatten)]
    pub stopped: StoppedBy,
}

/// What stops an autoscaled workload's pods: the quota, the resources it runs out of, and the
/// server's words for the first pod refused (all empty when nothing does).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedBy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Ceiling {
    /// Quota stops it below its maximum.
    pub fn capped(&self) -> bool {
        self.fits < self.max_replicas
    }

    /// Its minimum does not fit: a refusal, not only a ceiling.
    pub fn minimum_refused(&self) -> bool {
        self.fits < self.min_replicas
    }

    /// The sentence every output uses.
    pub fn sentence(&self) -> String {
        // A ScaledJob scales its Jobs, not a workload's pods.
        let unit = if self.autoscaler_kind == AutoscalerKind::ScaledJob { "Jobs" } else { "pods" };
        let who =
            format!("{} {} scales {} from {} to {} {unit}", self.autoscaler_kind.short(), self.autoscaler, self.target, self.min_replicas, self.max_replicas);
        if !self.capped() {
            return format!("{who}; the quotas let all {} run", self.max_replicas);
        }
        let by = match (&self.stopped.quota, self.stopped.resources.is_empty()) {
            (Some(q), false) => format!("quota {q} lets {} run ({})", self.fits, self.stopped.resources.join(", ")),
            (Some(q), true) => format!("quota {q} lets {} run", self.fits),
            (None, _) => format!("{} can run", self.fits),
        };
        if self.minimum_refused() {
            format!("{who}; {by}: even its minimum of {} is refused", self.min_replicas)
        } else {
            format!("{who}; {by}: scale-ups past {} will be refused", self.fits)
        }
    }
}

/// How many of a workload's running pods quota lets come back at its VerticalPodAutoscaler's
/// target, when the VPA evicts (or resizes) them to apply it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VpaCeiling {
    pub vpa: String,
    /// `deployment/web`.
    pub target: String,
    pub mode: VpaMode,
    /// The pods that run now.
    pub pods: i32,
    /// Of them, how many the quotas let run at the target.
    pub fits: i32,
    /// What one pod asks of the resources that stop the rest (or of cpu and memory), as
    /// `requests.cpu=1200m`.
    pub per_pod: Vec<String>,
    /// What stops the pods that cannot come back.
    #[serde(flatten)]
    pub stopped: StoppedBy,
}

impl VpaCeiling {
    /// Some pods cannot come back at the target.
    pub fn capped(&self) -> bool {
        self.fits < self.pods
    }

    /// The sentence every output uses.
    pub fn sentence(&self) -> String {
        let how = if self.mode == VpaMode::InPlaceOrRecreate { "be resized or recreated" } else { "be recreated" };
        let each = if self.per_pod.is_empty() { String::new() } else { format!(" ({} each)", self.per_pod.join(", ")) };
        if !self.capped() {
            return format!("the quotas let all {} pods of {} {how} at VPA {}'s target{each}", self.pods, self.target, self.vpa);
        }
        let who = self.stopped.quota.as_deref().map_or_else(|| "the quotas let".to_string(), |q| format!("quota {q} lets"));
        format!(
            "{who} {} of {} pods of {} {how} at VPA {}'s target{each}: the other {} stay evicted",
            self.fits,
            self.pods,
            self.target,
            self.vpa,
            self.pods - self.fits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa(min: i32, max: i32, desired: Option<i32>) -> Autoscaler {
        Autoscaler {
            kind: AutoscalerKind::HorizontalPodAutoscaler,
            target: Some(ScaleTarget { api_version: "apps/v1".into(), kind: "Deployment".into(), name: "web".into() }),
            min,
            max,
            idle: None,
            desired,
            made_for: None,
            job: None,
        }
    }

    #[test]
    fn replicas_follow_the_hpa_controllers_rules() {
        // (written, live, autoscaler, replicas)
        let cases: Vec<(Option<i32>, Option<i32>, Option<Autoscaler>, i32)> = vec![
            // No autoscaler: the manifest's count; left out, the live count stays, else 1.
            (Some(5), Some(8), None, 5),
            (None, Some(8), None, 8),
            (None, None, None, 1),
            // A new workload starts at its count (or 1), raised to the minimum.
            (Some(5), None, Some(hpa(12, 20, None)), 12),
            (None, None, Some(hpa(3, 20, None)), 3),
            (Some(30), None, Some(hpa(3, 20, None)), 20),
            // An existing one: the HPA's wish, else the running count, within [min, max].
            (Some(5), Some(5), Some(hpa(12, 20, None)), 12),
            (Some(5), Some(9), Some(hpa(3, 20, Some(14))), 14),
            (None, Some(25), Some(hpa(3, 20, None)), 20),
            // A target scaled to 0 is left there.
            (Some(0), Some(0), Some(hpa(3, 20, None)), 0),
            // An invalid autoscaler (max below min) is not used.
            (Some(4), None, Some(hpa(5, 2, None)), 4),
        ];
        for (written, live, a, want) in cases {
            let got = replicas(written, live, a.as_ref().map(|a| ("web", a)));
            assert_eq!(got.replicas, want, "{written:?} {live:?} {a:?}: {:?}", got.why);
        }
    }

    #[test]
    fn a_keda_hpa_stands_for_its_scaled_object_only_when_that_is_unknown() {
        let mut so = hpa(0, 30, None);
        so.kind = AutoscalerKind::ScaledObject;
        let mut made = hpa(1, 30, Some(7));
        made.made_for = Some("web".into());
        let (one, note) = the_one(&[("keda-hpa-web", &made), ("web", &so)]);
        let (name, a) = one.unwrap();
        assert_eq!((name, a.kind, a.desired, note), ("web", AutoscalerKind::ScaledObject, Some(7), None));
        let (one, _) = the_one(&[("keda-hpa-web", &made)]);
        assert_eq!(one.unwrap().0, "keda-hpa-web");
        let other = hpa(2, 4, None);
        let (_, note) = the_one(&[("a", &other), ("b", &other)]);
        assert!(note.unwrap().starts_with("2 autoscalers target this workload (HPA a, HPA b)"));
    }

    #[test]
    fn the_ceiling_sentence_names_quota_resources_and_where_scale_ups_stop() {
        let c = Ceiling {
            autoscaler_kind: AutoscalerKind::HorizontalPodAutoscaler,
            autoscaler: "web".into(),
            target: "deployment/web".into(),
            min_replicas: 3,
            max_replicas: 20,
            replicas: 3,
            fits: 8,
            stopped: StoppedBy { quota: Some("compute".into()), resources: vec!["requests.cpu".into()], message: None },
        };
        assert_eq!(c.sentence(), "HPA web scales deployment/web from 3 to 20 pods; quota compute lets 8 run (requests.cpu): scale-ups past 8 will be refused");
        let low = Ceiling { min_replicas: 12, ..c.clone() };
        assert!(low.sentence().ends_with("even its minimum of 12 is refused"));
        let all = Ceiling { fits: 20, stopped: StoppedBy::default(), ..c };
        assert_eq!(all.sentence(), "HPA web scales deployment/web from 3 to 20 pods; the quotas let all 20 run");
    }

    #[test]
    fn the_vpa_sentence_says_how_many_pods_come_back_at_the_target() {
        let v = VpaCeiling {
            vpa: "web".into(),
            target: "deployment/web".into(),
            mode: VpaMode::Recreate,
            pods: 5,
            fits: 3,
            per_pod: vec!["requests.cpu=1200m".into()],
            stopped: StoppedBy { quota: Some("compute".into()), resources: vec!["requests.cpu".into()], message: None },
        };
        assert_eq!(
            v.sentence(),
            "quota compute lets 3 of 5 pods of deployment/web be recreated at VPA web's target (requests.cpu=1200m each): the other 2 stay evicted"
        );
        let all = VpaCeiling { fits: 5, mode: VpaMode::InPlaceOrRecreate, ..v };
        assert_eq!(all.sentence(), "the quotas let all 5 pods of deployment/web be resized or recreated at VPA web's target (requests.cpu=1200m each)");
    }
}
