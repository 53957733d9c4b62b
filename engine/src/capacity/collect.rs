//! Objects folded into the [`Collector`] one at a time: [`Collector::add`] reads an object's
//! kind and hands it to the step for that kind (nodes, ResourceSlices, quotas, pods,
//! autoscalers, controllers and their events), which keeps only per-namespace sums.

use serde_json::Value;

use super::{add_to, pod_charge, row_of, Collector, Controller, Failure, LeftOut, Namespace, NodeEntry, Quota, Scalable, Slice};
use crate::admission::scopes::describe as describe_selector;
use crate::admission::usage;
use crate::manifest::{Document, InputError};
use crate::objects::{self, Body, Sets};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// Pod names kept per controller for [`Collector::claims_pending`]: the refusal is looked up
/// among their events.
const MAX_PENDING_NAMES: usize = 1000;

/// The most devices the API server lets one ResourceSlice hold (resource.k8s.io validation,
/// `ResourceSliceMaxDevices`).
pub const MAX_SLICE_DEVICES: usize = 128;

fn at(d: &Document, field: &str, msg: impl Into<String>) -> InputError {
    InputError::at(&d.origin, Some(field.to_string()), msg)
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str)
}

fn int_at(v: &Value, path: &[&str]) -> Option<i64> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_i64)
}

fn quantities(d: &Document, v: Option<&Value>, field: &str) -> Result<ResourceList, InputError> {
    let mut out = ResourceList::new();
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(out) };
    let map = v.as_object().ok_or_else(|| at(d, field, "must be a map of resource names to quantities"))?;
    for (k, q) in map {
        let text = match q {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return Err(at(d, &format!("{field}.{k}"), "must be a quantity")),
        };
        let q = Quantity::parse(&text).map_err(|e| at(d, &format!("{field}.{k}"), format!("{text:?}: {e}")))?;
        out.insert(k.clone(), q);
    }
    Ok(out)
}

/// A node's allocatable as written, as one text (its JSON), when it is a map of texts and
/// numbers, or none: what [`quantities`] reads the same way every time.
fn written_key(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::Object(m)) if m.values().all(|q| q.is_string() || q.is_number()) => serde_json::to_string(m).ok(),
        Some(_) => None,
    }
}

/// A device class's driver, when its selectors say it plainly (`device.driver == "x"`):
/// other CEL expressions are not evaluated.
fn class_driver(v: &Value) -> Option<String> {
    let sels = v.get("spec")?.get("selectors")?.as_array()?;
    sels.iter().find_map(|s| {
        let e = s.get("cel")?.get("expression")?.as_str()?.trim();
        let rest = e.strip_prefix("device.driver")?.trim_start().strip_prefix("==")?.trim();
        let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let inner = rest.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.contains(q) && !inner.is_empty()).then(|| inner.to_string())
    })
}

/// Capacity rows of a list: quota (or pod usage) names folded into their rows, the smallest
/// value kept when two names share a row (`cpu` and `requests.cpu` in one quota).
fn rows_min(list: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    for (k, v) in list {
        let Some((row, _)) = row_of(k) else { continue };
        match out.get_mut(&row) {
            Some(cur) if *v < *cur => *cur = v.clone(),
            Some(_) => {}
            None => {
                out.insert(row, v.clone());
            }
        }
    }
    out
}

impl Collector {
    fn ns(&mut self, name: &str) -> &mut Namespace {
        if !self.namespaces.contains_key(name) {
            self.namespaces.insert(name.to_string(), Namespace::default());
        }
        self.namespaces.get_mut(name).expect("inserted")
    }

    /// Says an autoscaler's target does not exist (its GET answered 404): the views name the
    /// autoscaler and count nothing for it, without calling the answer incomplete.
    pub fn target_absent(&mut self, namespace: &str, target: &objects::ScaleTarget) {
        self.absent_targets.insert((namespace.to_string(), format!("{}/{}", target.kind.to_lowercase(), target.name)));
    }

    /// Says the views are missing something (`cannot list nodes (RBAC): ...`).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Says a kind was read in full, even when there was none of it (a LIST with no items):
    /// the views then say nothing is missing.
    pub fn mark_read(&mut self, kind: &'static str) {
        self.seen.insert(match kind {
            "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" | "ReplicationController" => "Controller",
            k => k,
        });
    }

    /// Whether a kind was seen (a state file without Nodes says nothing about them).
    pub fn saw(&self, kind: &str) -> bool {
        self.seen.contains(kind)
    }

    /// Takes one object. Kinds the views do not read are skipped; an object they read that
    /// is malformed is an error naming its document and field.
    pub fn add(&mut self, d: &Document) -> Result<(), InputError> {
        crate::manifest::stored_by_a_server(&d.origin)?;
        let v = &d.value;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let group = v.get("apiVersion").and_then(Value::as_str).and_then(|a| a.rsplit_once('/')).map_or("", |(g, _)| g);
        let name = str_at(v, &["metadata", "name"]).unwrap_or("").to_string();
        let namespace = str_at(v, &["metadata", "namespace"]).unwrap_or("").to_string();
        match (group, kind) {
            ("", "Node") => {
                self.seen.insert("Node");
                self.node(d, name)?;
            }
            ("", "Namespace") => {
                self.seen.insert("Namespace");
                self.ns(&name).listed = true;
            }
            ("resource.k8s.io", "ResourceSlice") => {
                self.seen.insert("ResourceSlice");
                self.resource_slice(d, &name)?;
            }
            ("resource.k8s.io", "DeviceClass") => {
                self.seen.insert("DeviceClass");
                self.classes.insert(name, class_driver(v));
            }
            ("", "Event") | ("events.k8s.io", "Event") => {
                self.seen.insert("Event");
                self.event(v, namespace);
            }
            ("", "ResourceQuota") => {
                self.seen.insert("ResourceQuota");
                self.quota(d, name, namespace)?;
            }
            ("", "Pod") => {
                self.seen.insert("Pod");
                self.pod(d, name, namespace)?;
            }
            (g, k) if objects::autoscaler_type(g, k).is_some_and(|t| matches!(t.sets, Sets::Replicas(_))) => {
                self.seen.insert("Autoscaler");
                self.autoscaler(d, name, namespace)?;
            }
            (g, k) if objects::autoscaler_type(g, k).is_some_and(|t| t.sets == Sets::Requests) => {
                self.seen.insert("Autoscaler");
                self.vpa(d, name, namespace)?;
            }
            (crate::kueue::GROUP, "Workload") => {
                self.seen.insert("Workload");
                self.kueue_workload(v, name, namespace);
            }
            (crate::kueue::GROUP, "LocalQueue") => {
                self.local_queues.insert((namespace, name), str_at(v, &["spec", "clusterQueue"]).unwrap_or("").to_string());
            }
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") | ("", "ReplicationController") => {
                self.seen.insert("Controller");
                self.scalable(d, kind, &name, &namespace);
                self.controller(v, kind, name, namespace);
            }
            _ => {}
        }
        Ok(())
    }

    /// A ResourceSlice: its devices counted in its pool, the newest generation of a pool
    /// winning.
    fn resource_slice(&mut self, d: &Document, name: &str) -> Result<(), InputError> {
        let v = &d.value;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        // The API server stores no slice of more devices than its validation allows: a state
        // holding one was not read from a server, and is not counted as if it were.
        if let Some(n) = spec.get("devices").and_then(Value::as_array).map(Vec::len).filter(|n| *n > MAX_SLICE_DEVICES) {
            return Err(at(
                d,
                "spec.devices",
                format!("Too many: {n}: must have at most {MAX_SLICE_DEVICES} items (the API server stores no larger ResourceSlice)"),
            ));
        }
        let driver = str_at(spec, &["driver"]).unwrap_or("").to_string();
        let pool = str_at(spec, &["pool", "name"]).unwrap_or(name).to_string();
        let generation = int_at(spec, &["pool", "generation"]).unwrap_or(0);
        let devices = spec.get("devices").and_then(Value::as_array).map_or(0, |a| a.len() as i64);
        let node = str_at(spec, &["nodeName"]).map(str::to_string);
        let key = (driver.clone(), pool);
        let e = self.slices.entry(key.clone()).or_default();
        if generation > e.generation {
            *e = Slice { generation, node, devices };
        } else if generation == e.generation {
            e.devices += devices;
            e.node = e.node.take().or(node);
        }
        self.slice_drivers.insert(key, driver);
        Ok(())
    }

    /// A ResourceQuota: what it enforces and uses, per capacity row; read again, the later
    /// one wins and the duplicate is counted.
    fn quota(&mut self, d: &Document, name: String, namespace: String) -> Result<(), InputError> {
        let o = objects::decode(d)?;
        if let Body::ResourceQuota(q) = o.body {
            let sels = q.selectors();
            let scoped = (!sels.is_empty()).then(|| sels.iter().map(|s| describe_selector(s).into_owned()).collect::<Vec<_>>().join("; "));
            let enforced = if q.has_status { &q.status_hard } else { &q.spec_hard };
            let quota = Quota {
                name: name.clone(),
                scoped,
                hard: rows_min(enforced),
                used: rows_min(&q.status_used),
                all_hard: enforced.clone(),
                all_used: q.status_used.clone(),
            };
            let quotas = &mut self.ns(&namespace).quotas;
            let again = match quotas.iter_mut().find(|q| q.name == quota.name) {
                Some(old) => {
                    *old = quota;
                    true
                }
                None => {
                    quotas.push(quota);
                    false
                }
            };
            if again {
                self.duplicates.add(|| format!("ResourceQuota {namespace}/{name}"));
            }
        }
        Ok(())
    }

    /// A Pod: counted among its controller's pods waiting for claims from templates, and, when
    /// quota counts it, its usage added to its namespace's rows.
    fn pod(&mut self, d: &Document, name: String, namespace: String) -> Result<(), InputError> {
        let o = objects::decode(d)?;
        if let Body::Pod(p) = &o.body {
            if let (true, Some((kind, owner))) = (p.waits_for_claims(), &o.meta.controller) {
                let e = self.claims_pending.entry((namespace.clone(), format!("{}/{owner}", kind.to_lowercase()))).or_default();
                if e.0.len() < MAX_PENDING_NAMES {
                    e.0.push(name.clone());
                }
                e.1 += 1;
            }
            if usage::pod_is_counted(p) {
                let used = usage::pod_usage(p);
                let ns = self.ns(&namespace);
                for (k, q) in &used {
                    // `cpu` and `requests.cpu` are the same request: one of them.
                    if matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage") || k.starts_with("hugepages-") {
                        continue;
                    }
                    if let Some((row, _)) = row_of(k) {
                        add_to(&mut ns.pods, &row, q);
                    }
                }
            }
        }
        Ok(())
    }

    /// An HPA or KEDA ScaledObject, by its target; read again, the later one wins.
    fn autoscaler(&mut self, d: &Document, name: String, namespace: String) -> Result<(), InputError> {
        let o = objects::decode(d)?;
        if let Body::Autoscaler(a) = o.body {
            if let Some(t) = &a.target {
                let list = self.autoscalers.entry((namespace, format!("{}/{}", t.kind.to_lowercase(), t.name))).or_default();
                list.retain(|(n, b)| !(n == &name && b.kind == a.kind));
                list.push((name, *a));
            }
        }
        Ok(())
    }

    /// A VerticalPodAutoscaler, by its target, with when it was made; read again, the later one
    /// wins.
    fn vpa(&mut self, d: &Document, name: String, namespace: String) -> Result<(), InputError> {
        let o = objects::decode(d)?;
        let created = o.meta.creation_timestamp.clone().unwrap_or_default();
        if let Body::Vpa(v) = o.body {
            if let Some(t) = &v.target {
                let list = self.vpas.entry((namespace, format!("{}/{}", t.kind.to_lowercase(), t.name))).or_default();
                list.retain(|(n, _, _)| n != &name);
                list.push((name, created, *v));
            }
        }
        Ok(())
    }

    fn node(&mut self, d: &Document, name: String) -> Result<(), InputError> {
        let v = &d.value;
        let mut reasons = Vec::new();
        if v.get("spec").and_then(|s| s.get("unschedulable")).and_then(Value::as_bool) == Some(true) {
            reasons.push("unschedulable (cordoned)".to_string());
        }
        for t in v.get("spec").and_then(|s| s.get("taints")).and_then(Value::as_array).into_iter().flatten() {
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            if effect == "NoSchedule" || effect == "NoExecute" {
                let key = t.get("key").and_then(Value::as_str).unwrap_or("");
                let value = t.get("value").and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| format!("={s}")).unwrap_or_default();
                reasons.push(format!("taint {key}{value}:{effect}"));
            }
        }
        let ready = v.get("status").and_then(|s| s.get("conditions")).and_then(Value::as_array).and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
                .map(|c| c.get("status").and_then(Value::as_str).unwrap_or("Unknown").to_string())
        });
        match ready.as_deref() {
            Some("True") => {}
            Some(s) => reasons.push(format!("not Ready ({s})")),
            None => reasons.push("no Ready condition".into()),
        }
        let written = v.get("status").and_then(|s| s.get("allocatable"));
        // Nodes are alike: an allocatable written as one read before is that one's shape,
        // already read and found valid.
        let key = written_key(written);
        let shape = match key.as_deref().and_then(|k| self.nodes.written_shape(k)) {
            Some(id) => id,
            None => {
                let alloc = quantities(d, written, "status.allocatable")?;
                // The API server refuses a Node whose allocatable is negative (ValidateNodeResources).
                if let Some((k, q)) = alloc.iter().find(|(_, q)| q.sign() < 0) {
                    let said = format!("Node {name:?} is invalid: status.allocatable.{k}: Invalid value: \"{q}\": {}", crate::validation::reasons::NEGATIVE);
                    return Err(InputError::at(&d.origin, None, said));
                }
                self.nodes.shape(alloc, key)
            }
        };
        let entry = if reasons.is_empty() { NodeEntry::Counted(shape) } else { NodeEntry::LeftOut(LeftOut { name: name.clone(), reasons }) };
        if self.nodes.put(name.clone(), entry) {
            self.duplicates.add(|| format!("Node {name}"));
        }
        Ok(())
    }

    fn event(&mut self, v: &Value, namespace: String) {
        let reason = str_at(v, &["reason"]).unwrap_or("");
        // FailedCreate: a controller's pod; FailedResourceClaimCreation: a pod's claim.
        if reason != "FailedCreate" && reason != "FailedResourceClaimCreation" {
            return;
        }
        // Every refusal counts (quota, LimitRange, PodSecurity, a policy or webhook, ...):
        // `blocked` says which.
        let message = str_at(v, &["message"]).or_else(|| str_at(v, &["note"])).unwrap_or("");
        if message.is_empty() {
            return;
        }
        let obj = v.get("involvedObject").or_else(|| v.get("regarding")).unwrap_or(&Value::Null);
        let (Some(kind), Some(name)) = (str_at(obj, &["kind"]), str_at(obj, &["name"])) else { return };
        let ns = str_at(obj, &["namespace"]).map(str::to_string).unwrap_or(namespace);
        let last_seen = ["lastTimestamp", "eventTime", "firstTimestamp"]
            .iter()
            .find_map(|k| str_at(v, &[k]))
            .or_else(|| str_at(v, &["series", "lastObservedTime"]))
            .or_else(|| str_at(v, &["metadata", "creationTimestamp"]))
            .unwrap_or("")
            .to_string();
        let count = int_at(v, &["count"]).or_else(|| int_at(v, &["series", "count"])).unwrap_or(1);
        let key = (ns, format!("{}/{name}", kind.to_lowercase()));
        let f = Failure { message: message.to_string(), count, last_seen };
        match self.failures.get_mut(&key) {
            Some(old) if old.last_seen > f.last_seen => {}
            Some(old) => *old = f,
            None => {
                self.failures.insert(key, f);
            }
        }
    }

    /// A workload an autoscaler may scale: its pods and one pod's charge (its template's
    /// requests and limits; LimitRange defaults are not applied). One that does not decode is
    /// left out (the views it matters to name its autoscaler).
    fn scalable(&mut self, d: &Document, kind: &str, name: &str, namespace: &str) {
        let key = (namespace.to_string(), format!("{}/{name}", kind.to_lowercase()));
        // Only a workload an autoscaler read before targets: without autoscalers nothing is
        // decoded (a target read before its autoscaler is read again, [`Self::add_scale_target`]).
        let by_vpa = self.vpas.contains_key(&key);
        if !self.scale_targets || !(by_vpa || self.autoscalers.contains_key(&key)) || self.workloads.contains_key(&key) {
            return;
        }
        let owned = d.value.get("metadata").and_then(|m| m.get("ownerReferences")).and_then(Value::as_array).is_some_and(|r| !r.is_empty());
        if !matches!(kind, "Deployment" | "StatefulSet" | "ReplicationController" | "ReplicaSet") || (kind == "ReplicaSet" && owned) {
            return;
        }
        let decoded = objects::decode(d);
        let Some(w) = decoded.as_ref().ok().and_then(|o| if let Body::Workload(w) = &o.body { Some(w) } else { None }) else {
            self.undecoded_targets.insert(key);
            return;
        };
        let current = i64::from(w.current.or(w.replicas).unwrap_or(1));
        let template = by_vpa.then(|| w.template.clone());
        self.workloads.insert(key, Scalable { current, per_pod: pod_charge(&w.template), template });
    }

    /// Takes a workload an autoscaler targets that was not kept when first read (it came
    /// before its autoscaler): the caller reads the input again for [`Self::unread_scale_targets`].
    /// Anything else is ignored.
    pub fn add_scale_target(&mut self, d: &Document) {
        let v = &d.value;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = str_at(v, &["metadata", "name"]).unwrap_or("");
        let namespace = str_at(v, &["metadata", "namespace"]).unwrap_or("");
        self.scalable(d, kind, name, namespace);
    }

    /// A Workload of Kueue's: kept when it waits for quota (`QuotaReserved` False, and not
    /// finished), under the object that owns it (`job/train`).
    fn kueue_workload(&mut self, v: &Value, name: String, namespace: String) {
        let conditions = v.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let condition = |t: &str| conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(t));
        let is_true = |t: &str| condition(t).and_then(|c| c.get("status")).and_then(Value::as_str) == Some("True");
        let Some(reserved) = condition("QuotaReserved").filter(|c| c.get("status").and_then(Value::as_str) == Some("False")) else { return };
        if is_true("Finished") {
            return;
        }
        let owner = v
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|refs| refs.iter().find(|r| r.get("controller").and_then(Value::as_bool) == Some(true)))
            .map(|r| format!("{}/{}", r["kind"].as_str().unwrap_or("").to_lowercase(), r["name"].as_str().unwrap_or("")))
            .unwrap_or_else(|| format!("workload/{name}"));
        let pods =
            v.pointer("/spec/podSets").and_then(Value::as_array).map_or(0, |sets| sets.iter().filter_map(|s| s.get("count").and_then(Value::as_i64)).sum());
        let text = |k: &str| reserved.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let pending = super::KueuePending {
            workload: name,
            queue: str_at(v, &["spec", "queueName"]).unwrap_or("").to_string(),
            reason: text("reason"),
            message: text("message"),
            pods,
        };
        self.kueue_pending.insert((namespace, owner), pending);
    }

    fn controller(&mut self, v: &Value, kind: &str, name: String, namespace: String) {
        let status = |k: &str| int_at(v, &["status", k]).unwrap_or(0);
        let (wanted, current) = match kind {
            "DaemonSet" => (status("desiredNumberScheduled"), status("currentNumberScheduled")),
            "Job" => {
                if v.get("spec").and_then(|s| s.get("suspend")).and_then(Value::as_bool) == Some(true)
                    || v.get("status").and_then(|s| s.get("completionTime")).is_some()
                {
                    (0, 0)
                } else {
                    let parallelism = int_at(v, &["spec", "parallelism"]).unwrap_or(1);
                    let left = int_at(v, &["spec", "completions"]).map(|c| c - status("succeeded")).unwrap_or(parallelism);
                    (parallelism.min(left).max(0), status("active"))
                }
            }
            // A Deployment's own pods are its new ReplicaSet's: missing while that ReplicaSet
            // cannot be created (its pods otherwise show on the ReplicaSet).
            "Deployment" => (int_at(v, &["spec", "replicas"]).unwrap_or(1), 0),
            _ => (int_at(v, &["spec", "replicas"]).unwrap_or(1), status("replicas")),
        };

        let owner = v.get("metadata").and_then(|m| m.get("ownerReferences")).and_then(Value::as_array).and_then(|refs| {
            refs.iter()
                .find(|r| {
                    r.get("controller").and_then(Value::as_bool) == Some(true)
                        && matches!(r.get("kind").and_then(Value::as_str), Some("Deployment" | "CronJob"))
                })
                .map(|r| format!("{}/{}", r["kind"].as_str().unwrap_or("").to_lowercase(), r["name"].as_str().unwrap_or("")))
        });
        // A Deployment whose new ReplicaSet the server refused says so in its Progressing
        // condition.
        let condition = if kind == "Deployment" {
            crate::why::replicaset_refused(kind, v)
        } else {
            v.get("status").and_then(|s| s.get("conditions")).and_then(Value::as_array).and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("ReplicaFailure") && c.get("status").and_then(Value::as_str) == Some("True"))
                    .and_then(|c| c.get("message").and_then(Value::as_str))
                    .map(str::to_string)
            })
        };
        self.controllers.insert((namespace, format!("{}/{name}", kind.to_lowercase())), Controller { owner, wanted, current, condition });
    }
}
