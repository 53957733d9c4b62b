//! The whole offline pipeline for `check`: cluster state + documents in order -> a report.
//!
//! Documents are admitted one by one, as `kubectl create -f` sends them: each sees the usage
//! charged by the earlier ones. A workload is admitted as the object itself, then the objects
//! its controllers create (a Deployment's ReplicaSet, then its pods one at a time; a
//! StatefulSet's claims and pods, ...), so the report says how many replicas fit.
//!
//! Rooms: `state` (what the cluster holds, and the charges admitted documents add),
//! `report` (what a check hands out), `replay` (one object through mutation and admission, a
//! workload through its controllers), `template_change` (the rollout of a changed template),
//! `autoscalers` (the replicas and requests autoscalers set, and their ceilings);
//! this file holds the streaming [`Checker`] that walks the documents in order.

mod autoscalers;
mod budget;
pub mod cluster_kinds;
pub mod dry_run;
mod gaps;
mod remember;
mod replay;
mod report;
mod state;
mod template_change;
mod webhooks;

pub use report::{CheckOptions, DocumentReport, Outcome, PodsReport, Report, Summary, Undecided};
pub use state::{ClusterState, Gap, Lacking, VPA_RESOURCE};
pub use webhooks::WebhookSeen;

use replay::{admit_as, admit_pod_claims, admit_workload_pods};

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::admission::{Decision, RefusalReason};
use crate::defaulting;
use crate::objects::{Autoscaler, Body, Object, Vpa, Workload};
use crate::version::{self, Served, VersionReport};

/// Where a document's object is stored: (namespace, group-resource, name).
type Key = (String, String, String);

/// Checks documents one at a time, in order, charging the state as they are admitted: each
/// document's report can be rendered and dropped before the next one is decided, so memory
/// does not grow with the number of documents.
pub struct Checker<'a> {
    state: &'a mut ClusterState,
    opts: &'a CheckOptions,
    summary: Summary,
    order_matters: bool,
    /// Replay every replica of a workload one by one (the tests' oracle).
    each_replica: bool,
    /// Keys (namespace, group-resource, name) that more than one document names, when the
    /// documents are known in advance: an admitted object whose key is not among them is
    /// kept as its key only (see [`ClusterState::seen`]).
    repeated: Option<BTreeSet<Key>>,
    /// Name prefixes of the pods and claims the input's workloads create, per group-resource
    /// and namespace: an existing object of such a name is updated, not created, by its
    /// replica.
    generated: HashMap<&'static str, HashMap<String, HashSet<String>>>,
    /// Namespaces the documents create: a quota created in one finds nothing there to count.
    created_namespaces: BTreeSet<String>,
    /// The autoscalers the documents create or change, per namespace, by name: they decide
    /// the replicas of the workloads they target wherever those come in the input.
    input_autoscalers: BTreeMap<String, Vec<(String, Autoscaler)>>,
    /// The keys of every document (when announced): an autoscaler whose target is among them
    /// leaves the answer to the target's own document.
    input_keys: BTreeSet<Key>,
    /// The VerticalPodAutoscalers the documents create or change, per namespace: (name,
    /// creation time, object).
    input_vpas: BTreeMap<String, Vec<(String, String, Vpa)>>,
}

impl<'a> Checker<'a> {
    pub fn new(state: &'a mut ClusterState, opts: &'a CheckOptions) -> Checker<'a> {
        Checker {
            state,
            opts,
            summary: Summary::default(),
            order_matters: false,
            each_replica: false,
            repeated: None,
            generated: HashMap::new(),
            created_namespaces: BTreeSet::new(),
            input_autoscalers: BTreeMap::new(),
            input_keys: BTreeSet::new(),
            input_vpas: BTreeMap::new(),
        }
    }

    /// Tells the checker every document it will be given (in any order), so that objects no
    /// later document names again are kept as their keys only.
    pub fn expect(&mut self, objects: &[Object]) {
        let mut once = BTreeSet::new();
        let mut repeated = BTreeSet::new();
        for o in objects {
            let key = self.key_of(o);
            if let Body::Workload(w) = &o.body {
                let mut prefix = |resource: &'static str, p: String| self.generated.entry(resource).or_default().entry(key.0.clone()).or_default().insert(p);
                prefix("pods", format!("{}-", o.meta.name));
                for (claim, _) in &w.volume_claim_templates {
                    prefix("persistentvolumeclaims", format!("{claim}-{}-", o.meta.name));
                }
            }
            if let Body::Autoscaler(a) = &o.body {
                self.input_autoscalers.entry(key.0.clone()).or_default().push((key.2.clone(), (**a).clone()));
            }
            if let Body::Vpa(v) = &o.body {
                let created = o.meta.creation_timestamp.clone().unwrap_or_default();
                self.input_vpas.entry(key.0.clone()).or_default().push((key.2.clone(), created, (**v).clone()));
            }
            if let Some(k) = once.replace(key) {
                repeated.insert(k);
            }
        }
        self.repeated = Some(repeated);
        self.input_keys = once;
    }

    /// Whether a later document, or a replica of a workload, may name this admitted object
    /// again (always, when the documents were not announced with [`Checker::expect`]).
    fn named_again(&self, key: &Key, body: &Body) -> bool {
        let Some(repeated) = &self.repeated else { return true };
        // Claim templates are looked up by the pods that name them.
        matches!(body, Body::ResourceClaimTemplate(_))
            || repeated.contains(key)
            || self.generated.get(key.1.as_str()).and_then(|by_ns| by_ns.get(&key.0)).is_some_and(|prefixes| {
                // Every prefix ends in `-`: look up the name's prefixes up to each of its dashes.
                key.2.match_indices('-').any(|(i, _)| prefixes.contains(&key.2[..=i]))
            })
    }

    /// The namespace an object is created in: its own, or the check's.
    fn namespace_of(&self, o: &Object) -> String {
        o.meta.namespace.clone().unwrap_or_else(|| self.opts.namespace.clone())
    }

    /// The key (namespace, group-resource, name) an object is stored under.
    fn key_of(&self, o: &Object) -> Key {
        (self.namespace_of(o), o.type_info.group_resource(), o.meta.name.clone())
    }

    /// A copy of the state for trying `key`'s object out in `ns` without charging it: what
    /// admission consults there, and the object as it exists (an update).
    fn scratch_with(&self, ns: &str, key: &Key) -> ClusterState {
        let mut scratch = self.state.scratch_for(ns);
        if let Some(o) = self.state.existing.get(key) {
            scratch.existing.insert(key.clone(), o.clone());
        }
        scratch
    }

    /// The state as charged by the documents checked so far.
    pub fn state(&self) -> &ClusterState {
        self.state
    }

    /// What stops a document before it reaches admission: kubectl refuses a namespaced object
    /// that names another namespace than an explicit `-n`; the server refuses one larger than
    /// it reads.
    fn before_admission(&self, obj: &Object) -> Option<Decision> {
        let too_large = || {
            obj.meta
                .too_large
                .then(|| Decision::refused(RefusalReason::TooLarge, format!("Request entity too large: limit is {}", crate::objects::MAX_REQUEST_BODY_BYTES)))
        };
        if !obj.type_info.namespaced {
            return too_large();
        }
        if let Some(own) = obj.meta.namespace.as_deref().filter(|own| self.opts.enforce_namespace && *own != self.opts.namespace) {
            return Some(Decision::refused(
                RefusalReason::NamespaceMismatch,
                format!(
                    "the namespace from the provided object {own:?} does not match the namespace {:?}. You must pass '--namespace={own}' to perform this operation.",
                    self.opts.namespace
                ),
            ));
        }
        // The server reads the body (and stops at its limit) before admission.
        too_large()
    }

    /// A verdict that rests on the server's PodSecurity defaults, which no API shows: no
    /// admission configuration was given, the namespace has no enforce label, and the pods
    /// of this document break the baseline level, which a cluster's default may enforce.
    fn pod_security_note(&self, obj: &Object, ns: &str) -> Option<String> {
        if self.opts.pod_security.is_some() || !self.opts.rules.pod_security_admission {
            return None;
        }
        let (pod, annotations) = match &obj.body {
            Body::Pod(p) => (p, &obj.meta.annotations),
            Body::Workload(w) => (&w.template, &w.template_meta.annotations),
            _ => return None,
        };
        let labels = self.state.namespaces.as_ref()?.get(ns)?;
        if labels.contains_key(crate::admission::pod_security::ENFORCE_LABEL) {
            return None;
        }
        crate::admission::pod_security::breaks(pod, annotations, crate::admission::pod_security::Level::Baseline, &self.opts.rules).then(|| {
            format!(
                "namespace {ns:?} has no pod-security.kubernetes.io/enforce label: the answer assumes the server's default level is upstream's \"privileged\"; under a default of \"baseline\" or \"restricted\" these pods are refused (--admission-config gives the cluster's)"
            )
        })
    }

    /// Decides one document (the next one in order): the document itself, the existing
    /// workload it updates and its rollout, the pods its controller creates, what later
    /// documents see, the tally.
    pub fn check_one(&mut self, mut obj: Object) -> DocumentReport {
        let budget = budget::Budget::start(self.opts.decide_within);
        let ns = self.namespace_of(&obj);
        let key = self.key_of(&obj);
        let mut report = self.decide(&mut obj, &ns, &key);
        // The object as it exists is taken out of the state while the update is weighed against
        // it, and put back: not copied, as the old object of a large workload is most of its
        // size again. Nothing weighed in between looks it up by its key (they read the
        // autoscalers, VPAs, ReplicaSets, pods and claim templates of the namespace).
        let existing = self.state.existing.remove(&key);
        let was_existing = existing.is_some();
        if was_existing {
            report.notes.push("an object of this name already exists: this is an update".into());
        }
        // Past the document's time, what follows its own admission is left undecided.
        let left = Self::after_admission(&obj, was_existing).filter(|_| report.allowed && budget.spent());
        let late = left.is_some();
        let (scaled_by, succeeded) = if let Some(left) = left {
            report.undecided.push(budget.undecided(left));
            (None, 0)
        } else {
            let scaled_by = self.scale(&mut obj, existing.as_ref(), &ns, &mut report);
            self.vpa_of(&mut obj, existing.as_ref(), &ns, &mut report);
            let succeeded = match existing.as_ref().map(|e| &e.body) {
                Some(Body::Workload(old)) => self.existing_workload(&obj, old, &ns, &mut report),
                _ => 0,
            };
            (scaled_by, succeeded)
        };
        if let Some(e) = existing {
            self.state.existing.insert(key.clone(), e);
        }
        // Undecided for what the state lacks: what it tells, charged to nothing; later
        // documents do not see it. Late: its own admission was decided, and stands.
        let own = !late && !report.undecided.is_empty() && !matches!(obj.body, Body::Workload(_));
        if report.allowed && !late {
            self.after_admission_steps(&obj, &budget, (scaled_by, succeeded, was_existing), &ns, &key, &mut report);
        }
        if report.allowed {
            if let (Body::ResourceQuota(q), true) = (&obj.body, self.opts.rules.quota_request_limit_warning) {
                report.notes.extend(defaulting::quota_request_limit_warnings(&q.spec_hard));
            }
            if !own {
                self.remember(obj, ns, key, was_existing, &mut report);
            }
        }
        self.tally(&mut report);
        report
    }

    /// What a document's time running out after its own admission leaves unchecked, if
    /// anything follows it (as [`Checker::after_admission_steps`] takes the steps).
    fn after_admission(obj: &Object, was_existing: bool) -> Option<&'static str> {
        match &obj.body {
            Body::Workload(_) => Some("its pods, its rollout and its autoscaling"),
            Body::Autoscaler(_) | Body::Vpa(_) => Some("its target's pods"),
            Body::Pod(p) if !was_existing && !p.resource_claim_templates.is_empty() => Some("its ResourceClaims"),
            _ => None,
        }
    }

    /// An admitted document's consequences: a workload's pods and autoscaling ceilings, an
    /// autoscaler's target, a new pod's claims. The ceilings wait for the pods, and are left
    /// undecided when the document's time ran out on them.
    fn after_admission_steps(
        &mut self,
        obj: &Object,
        budget: &budget::Budget,
        (scaled_by, succeeded, was_existing): (Option<(String, Autoscaler)>, i32, bool),
        ns: &str,
        key: &Key,
        report: &mut DocumentReport,
    ) {
        let undecided = !report.undecided.is_empty();
        match &obj.body {
            Body::Workload(w) => {
                self.workload_pods(obj, w, succeeded, undecided, ns, key, report);
                if undecided {
                    return;
                }
                if budget.spent() {
                    report.undecided.push(budget.undecided("its autoscaling ceilings"));
                    return;
                }
                if let Some((name, a)) = &scaled_by {
                    report.autoscaling = Some(self.ceiling(obj, w, name, a, ns, report));
                }
                report.vpa = self.vpa_ceiling(obj, w, ns, report);
            }
            Body::Autoscaler(a) => self.autoscaler_target(obj, a, ns, report),
            Body::Vpa(v) => self.vpa_target(obj, v, ns, report),
            Body::Pod(p) if !was_existing && !p.resource_claim_templates.is_empty() => self.pod_claims(obj, undecided, ns, key, report),
            _ => {}
        }
    }

    /// The document itself: whether kubectl sends it (a kind the cluster serves, the
    /// namespace), whether the server reads it, then the admission chain. A document whose own
    /// answer needs what the state lacks goes through the chain on a scratch copy of the state.
    fn decide(&mut self, obj: &mut Object, ns: &str, key: &Key) -> DocumentReport {
        let mut notes = Vec::new();
        let served = if obj.type_info.unserved {
            // The cluster's discovery said so (a live check): its note is already in the run's notes.
            Served::No(format!("{} {} is not served by this cluster", obj.type_info.api_version, obj.type_info.kind))
        } else {
            version::served(&self.opts.rules, &obj.type_info.api_version, &obj.type_info.kind)
        };
        if obj.type_info.guessed {
            notes.push(format!(
                "{} is not a kind this tool knows: counted as count/{} (the resource name is guessed from the kind; a live check resolves it through discovery)",
                obj.type_info.kind,
                obj.type_info.group_resource()
            ));
        }
        if let Some(note) = privileged_note(obj, self.opts.allow_privileged) {
            notes.push(note);
        }
        // What the answer needs that the state lacks: a pod's (or claim's) own admission
        // depends on it; a workload's pods do.
        let lacking =
            if self.opts.assume_lacking || matches!(served, Served::No(_)) { vec![] } else { gaps::lacking_for(obj, self.state, ns, &self.opts.rules) };
        let own = !lacking.is_empty() && !matches!(obj.body, Body::Workload(_));
        let (decision, mutations) = match (&served, self.before_admission(obj)) {
            // kubectl finds no resource for the kind and sends nothing.
            (Served::No(note), _) => {
                notes.push(note.clone());
                (Decision::refused(RefusalReason::NotServed, version::no_matches_message(&obj.type_info.api_version, &obj.type_info.kind)), vec![])
            }
            (_, Some(refused)) => (refused, vec![]),
            (_, None) if own => admit_as(obj, &mut self.scratch_with(ns, key), ns, self.opts, true),
            (_, None) => admit_as(obj, self.state, ns, self.opts, true),
        };
        if let Served::Deprecated(note) = &served {
            notes.push(note.clone());
        }
        if let Some(s) = &decision.skipped {
            notes.push(format!("not checked against quota: {s}"));
        }
        let mut report = DocumentReport::decided(obj, ns, decision, mutations, notes);
        if let Some(note) = self.pod_security_note(obj, ns) {
            report.notes.push(note);
        }
        // What reached quota went through every webhook first (a refusal by a plugin before them
        // did not).
        // (A dry run's answer is the server's, past every webhook: its refusal too.)
        let asked = self.state.dry_runs.get(&dry_run::source_of(&obj.origin));
        if report.allowed || report.refuser() == Some(crate::admission::Stage::ResourceQuota) || asked.is_some() {
            let operation = if self.state.existing.contains_key(key) { "UPDATE" } else { "CREATE" };
            report.webhooks = webhooks::seen_by(self.state, obj, ns, operation);
            // The pods a dry run asked the server for are as it returned them.
            if let Some(d) = asked {
                let pods = if matches!(obj.body, Body::Pod(_)) { "the object" } else { "its pods" };
                for w in report.webhooks.iter_mut().filter(|w| w.mutating && w.sees == pods) {
                    w.dry_run = d.answer.is_ok();
                }
            }
            report.notes.extend(report.webhooks.iter().map(WebhookSeen::sentence));
            if let Some(d) = asked.filter(|d| d.answer.is_ok() && !d.stood_in.is_empty()) {
                let what: Vec<String> = d.stood_in.iter().map(crate::admission::StandIn::what).collect();
                report.notes.push(format!(
                    "the dry run was made without {}, which this input creates before them and the server does not hold yet: its answer stands for what the webhooks add, and the pods keep their own",
                    what.join(" and ")
                ));
            }
            if let Some(Err(why)) = asked.map(|d| &d.answer) {
                report.notes.push(why.clone());
            }
        }
        if own || (!lacking.is_empty() && report.allowed) {
            report.undecided = lacking;
        }
        report
    }

    /// The workload this document updates: the pods of it that exist are in the quotas' usage
    /// already (the controller creates only the ones above them: a Deployment blocked by
    /// quota has fewer pods than replicas, and its controller keeps trying to create the
    /// rest); a changed template starts a rollout; pods left Pending by refused claims.
    /// Returns how many of a Job's pods finished (they are not created again).
    fn existing_workload(&mut self, obj: &Object, old: &Workload, ns: &str, report: &mut DocumentReport) -> i32 {
        let running = match old.current {
            Some(n) => n,
            None => {
                // A DaemonSet runs a pod per node.
                let nodes = self.opts.nodes.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
                let assumed = if obj.type_info.kind == "DaemonSet" { nodes.unwrap_or(0) } else { old.replicas.unwrap_or(1).max(0) };
                report.notes.push(format!(
                    "the existing {} carries no status: its {assumed} replicas are taken to exist (a snapshot or a live check reads how many do)",
                    obj.type_info.kind
                ));
                assumed
            }
        };
        report.replicas_existing = Some(running);
        if let Body::Workload(new) = &obj.body {
            self.rollout(obj, old, new, running, ns, report);
            if !new.template.resource_claim_templates.is_empty() {
                self.pods_pending_for_claims(obj, ns, report);
            }
        }
        old.succeeded
    }

    /// The pods an admitted workload's controller creates, and their claims. A CronJob's come
    /// when its schedule fires: one run is evaluated without charging it to the documents that
    /// follow; an undecided workload's are what the state tells, charged to nothing.
    #[allow(clippy::too_many_arguments)]
    fn workload_pods(&mut self, obj: &Object, w: &Workload, succeeded: i32, undecided: bool, ns: &str, key: &Key, report: &mut DocumentReport) {
        // A copy only when its count changes: a workload's template can be most of a 3 MiB
        // object.
        let (unsuspended, fewer);
        let mut w = w;
        // Kueue holds a Job of its queues (suspended) until its ClusterQueue reserves quota:
        // its pods are what comes once it does (as many as Kueue counts, however the Job was
        // written), charged only when that is now.
        let kueue = self.kueue_of(obj, w, ns, report);
        let held = kueue.as_ref().is_some_and(|(k, _)| k.holds());
        if let Some((k, _)) = &kueue {
            let pods = Some(i32::try_from(k.count).unwrap_or(i32::MAX));
            if w.replicas != pods {
                unsuspended = Workload { replicas: pods, ..w.clone() };
                w = &unsuspended;
            }
        }
        if succeeded > 0 {
            // A Job runs min(parallelism, completions - succeeded) pods at once.
            if let (Some(r), Some(c)) = (w.replicas, w.counts.iter().find(|(p, _)| p.ends_with(".completions")).map(|(_, c)| *c)) {
                let left = i32::try_from((c - i64::from(succeeded)).max(0)).unwrap_or(i32::MAX);
                fewer = Workload { replicas: Some(r.min(left)), ..w.clone() };
                w = &fewer;
            }
        }
        let pods = if obj.type_info.kind == "CronJob" {
            let mut scratch = self.state.scratch_for(ns);
            let o = admit_workload_pods(obj, w, None, &mut scratch, ns, self.opts, self.each_replica);
            report.notes.push("a CronJob creates its Job and pods when the schedule fires: this is what one run would need against the current usage".into());
            o
        } else if undecided || held {
            let mut scratch = self.scratch_with(ns, key);
            admit_workload_pods(obj, w, report.replicas_existing, &mut scratch, ns, self.opts, self.each_replica)
        } else {
            admit_workload_pods(obj, w, report.replicas_existing, self.state, ns, self.opts, self.each_replica)
        };
        if let Some((k, requests)) = kueue {
            if !held {
                if let Some(state) = self.state.kueue.as_mut() {
                    std::sync::Arc::make_mut(state).reserve(&k, &requests);
                }
            }
            report.kueue = Some(k);
        }
        report.replicas = pods.wanted;
        report.replicas_admitted = pods.wanted.map(|_| pods.admitted);
        report.pod_message_alternatives = pods.first_refusal.as_ref().map(|r| r.alternatives.clone()).unwrap_or_default();
        if let Some(r) = pods.first_refusal {
            report.pods_refused(r);
        }
        report.pods = pods.explained;
        report.notes.extend(pods.notes);
        if obj.type_info.kind == "DaemonSet" && pods.wanted.is_none() && report.replicas_existing.is_none() {
            // A new DaemonSet whose pods were not checked: the answer waits for the node count.
            report.undecided.push(Undecided {
                lacking: None,
                why: "a DaemonSet runs one pod per eligible node and the node count is unknown: pass --nodes N to check its pods".into(),
                late: false,
            });
        }
        if let Some(r) = pods.claim_refusal {
            let pending = pods.claims_refused.len();
            report.notes.push(format!(
                "{} of {} pods admitted; the claims of {} would be refused: {}; those pods stay Pending",
                pods.admitted,
                pods.wanted.unwrap_or(pods.admitted),
                pods.claims_refused.describe(),
                r.message
            ));
            report.pods_pending = Some(pending);
            if report.pod_message.is_none() {
                report.pods_refused(r);
            }
        }
    }

    /// Kueue's answer for a Job labelled with one of its queues, and the pod set's requests
    /// (what an admitted Job reserves); `None` for anything else. Where no Kueue object was
    /// read, a note says its side is not replayed.
    fn kueue_of(&self, obj: &Object, w: &Workload, ns: &str, report: &mut DocumentReport) -> Option<(crate::kueue::KueueReport, BTreeMap<String, i64>)> {
        match kueue_answer(self.state, obj, w, ns)? {
            Ok(answer) => Some(answer),
            Err(note) => {
                report.notes.push(note);
                None
            }
        }
    }

    /// A new pod's ResourceClaims, which the resourceclaim controller creates once the pod
    /// exists: a refused one leaves the pod Pending.
    fn pod_claims(&mut self, obj: &Object, undecided: bool, ns: &str, key: &Key, report: &mut DocumentReport) {
        let (refusal, claim_notes) =
            if undecided { admit_pod_claims(obj, &mut self.scratch_with(ns, key), ns, self.opts) } else { admit_pod_claims(obj, self.state, ns, self.opts) };
        report.notes.extend(claim_notes);
        if let Some(r) = refusal {
            report.notes.push(format!("the pod is created, but its ResourceClaim would be refused: {}; the pod stays Pending", r.message));
            report.pods_pending = Some(1);
            report.pods_refused(r);
        }
    }

    /// The pods of an existing workload that exist but wait for ResourceClaims the controller
    /// could not create (quota refuses claims, not pods): they stay Pending, and a re-check says
    /// so, with what the next claim would be told now.
    fn pods_pending_for_claims(&mut self, obj: &Object, ns: &str, report: &mut DocumentReport) {
        let pending: Vec<Object> = self.state.pods_without_claims(ns, &obj.type_info.kind, &obj.meta.name).into_iter().cloned().collect();
        let Some(first) = pending.first() else { return };
        let mut scratch = self.state.scratch_for(ns);
        // The claim templates the next claim is made from.
        let templates = "resourceclaimtemplates.resource.k8s.io";
        for (key, o) in
            self.state.existing.range((ns.to_string(), templates.to_string(), String::new())..).take_while(|((n, gr, _), _)| n == ns && gr == templates)
        {
            scratch.existing.insert(key.clone(), o.clone());
        }
        let (refusal, _) = admit_pod_claims(first, &mut scratch, ns, self.opts);
        let names: Vec<&str> = pending.iter().take(5).map(|p| p.meta.name.as_str()).collect();
        let more = if pending.len() > names.len() { format!(" and {} more", pending.len() - names.len()) } else { String::new() };
        let why = match &refusal {
            Some(r) => format!("; the next try would be refused: {}", r.message),
            None => "; the claims fit now: the controller creates them at its next try".into(),
        };
        report.notes.push(format!(
            "{} of its pods exist but are Pending, their ResourceClaims not created ({}{more}: the pods' FailedResourceClaimCreation events say why){why}",
            pending.len(),
            names.join(", ")
        ));
        if refusal.is_some() {
            report.pods_pending = Some(report.pods_pending.unwrap_or(0).max(i32::try_from(pending.len()).unwrap_or(i32::MAX)));
            if let Some(r) = refusal.filter(|_| report.pod_message.is_none()) {
                report.pods_refused(r);
            }
        }
    }

    /// The counts and the notes about the whole run.
    pub fn finish(mut self) -> Summary {
        if self.order_matters {
            self.summary.notes.push("quotas are checked in name order; when several would refuse, the API server may name another one first".into());
        }
        self.summary
    }
}

/// Kueue's answer now for a Job in `ns` labelled with one of its queues, and the pod set's
/// requests (what it reserves once admitted): `None` for any other object, `Err` with a note
/// where no Kueue object was read. `check` and `why` ask it.
#[allow(clippy::type_complexity)]
pub fn kueue_answer(state: &ClusterState, obj: &Object, w: &Workload, ns: &str) -> Option<Result<(crate::kueue::KueueReport, BTreeMap<String, i64>), String>> {
    if obj.type_info.group != "batch" || obj.type_info.kind != "Job" {
        return None;
    }
    let queue = obj.meta.labels.get(crate::kueue::QUEUE_LABEL)?;
    let Some(k) = state.kueue.as_ref() else {
        return Some(Err(format!(
            "the Job is in Kueue's queue {queue} ({}), but no Kueue object was read: whether its ClusterQueue admits it is not replayed (its pods are checked as if it did)",
            crate::kueue::QUEUE_LABEL
        )));
    };
    let count = |f: &str| w.counts.iter().find(|(p, _)| p.ends_with(f)).map(|(_, c)| *c);
    let parallelism = count(".parallelism").unwrap_or(1);
    let pods = count(".completions").map_or(parallelism, |c| parallelism.min(c)).max(0);
    let labels = state.namespaces.as_ref().and_then(|n| n.get(ns));
    let overhead = w.template.runtime_class_name.as_ref().and_then(|rc| state.runtime_classes.as_ref()?.get(rc));
    Some(Ok(k.decide(ns, labels, queue, &w.template, pods, &state.limit_ranges_in(ns), overhead)))
}

/// Checks documents in order, handing each report to `each` (with the state as charged so
/// far) as soon as it is decided; returns the summary.
pub fn check_each<F>(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions, mut each: F) -> Summary
where
    F: FnMut(DocumentReport, &ClusterState),
{
    let mut checker = Checker::new(state, opts);
    checker.expect(&objects);
    for obj in objects {
        let report = checker.check_one(obj);
        each(report, checker.state());
    }
    checker.finish()
}

/// Checks documents in order against the state and keeps every report (see [`check_each`]
/// to handle them one at a time). The state is charged as documents are admitted (pass a
/// clone to keep the original).
pub fn check(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions) -> Report {
    let mut documents = Vec::new();
    let summary = check_each(state, objects, opts, |d, _| documents.push(d));
    Report { kubernetes: VersionReport::new(&opts.rules, "default", None), documents, notes: summary.notes }
}

/// A pod or a workload's template with a privileged container, when nobody said whether the
/// API server allows them (`--allow-privileged`, a flag no API shows): the answer assumes it
/// does, and says so.
fn privileged_note(obj: &Object, allow_privileged: Option<bool>) -> Option<String> {
    if allow_privileged.is_some() {
        return None;
    }
    let pod = match &obj.body {
        Body::Pod(p) => p,
        Body::Workload(w) => &w.template,
        _ => return None,
    };
    let names: Vec<&str> = pod.privileged_containers().collect();
    let first = names.first()?;
    let which = if names.len() == 1 {
        format!("container {first:?} is")
    } else {
        format!("containers {} are", names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "))
    };
    Some(format!(
        "{which} privileged: the API server refuses that unless it runs with --allow-privileged=true, which no API shows; checked as allowed (most distributions set it; --allow-privileged=false checks as upstream's default)"
    ))
}
