//! Pod specs: containers (long lists one container at a time), ephemeral containers,
//! cross-namespace affinity, and a pod object's own status.

use super::*;

fn container(c: &core::Container, path: Path<'_>) -> FieldResult<Container> {
    if c.name.is_empty() {
        return Err((format!("{path}.name"), "Required value: every container needs a name".into()));
    }
    let (requests, limits) = c.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
    Ok(Container {
        name: c.name.clone(),
        requests: resource_list(requests, &format_args!("{path}.resources.requests"), true)?,
        limits: resource_list(limits, &format_args!("{path}.resources.limits"), true)?,
        sidecar: c.restart_policy.as_deref() == Some("Always"),
        image: c.image.clone().unwrap_or_default(),
        security: crate::objects::security::container(c),
    })
}

/// What the engine keeps of an ephemeral container: its name, image and security settings.
fn ephemeral_container(c: &core::EphemeralContainer) -> Container {
    Container { name: c.name.clone(), image: c.image.clone().unwrap_or_default(), security: crate::objects::security::ephemeral(c), ..Container::default() }
}

fn affinity_term_is_cross_namespace(t: &core::PodAffinityTerm) -> bool {
    t.namespaces.as_ref().is_some_and(|n| !n.is_empty()) || t.namespace_selector.is_some()
}

fn cross_namespace_affinity(a: &Option<core::Affinity>) -> bool {
    let Some(a) = a else { return false };
    let required = |r: &Option<Vec<core::PodAffinityTerm>>| r.iter().flatten().any(affinity_term_is_cross_namespace);
    let preferred = |p: &Option<Vec<core::WeightedPodAffinityTerm>>| p.iter().flatten().any(|w| affinity_term_is_cross_namespace(&w.pod_affinity_term));
    let aff = a.pod_affinity.as_ref().is_some_and(|p| {
        required(&p.required_during_scheduling_ignored_during_execution) || preferred(&p.preferred_during_scheduling_ignored_during_execution)
    });
    let anti = a.pod_anti_affinity.as_ref().is_some_and(|p| {
        required(&p.required_during_scheduling_ignored_during_execution) || preferred(&p.preferred_during_scheduling_ignored_during_execution)
    });
    aff || anti
}

/// The quota-relevant parts of a pod spec; `path` is the JSON path of the spec.
pub fn pod_spec(spec: &core::PodSpec, path: &str) -> FieldResult<Pod> {
    lean_pod_spec(spec, path, None, None)
}

/// Container lists past this length are decoded one container at a time: k8s-openapi's
/// `Container` takes about 2 KB however little the manifest says, so a Pod of 100,000
/// containers held 270 MB of them at once before the engine kept its 100 bytes of each.
pub const MANY_CONTAINERS: usize = 1000;

/// A pod spec's container lists decoded one container at a time ([`long_container_lists`]).
pub(super) struct TakenContainers {
    pub(super) containers: Vec<Container>,
    pub(super) init_containers: Vec<Container>,
    /// `name=image` of each, init containers first (a workload's rollout compares them).
    pub(super) images: Vec<String>,
}

/// When a pod spec (at the JSON `pointer` in `v`, named `path` in errors) has a container
/// list longer than [`MANY_CONTAINERS`]: a copy of `v` with both lists empty, and the lists
/// decoded one container at a time, each checked as the whole object would have been.
pub(super) fn long_container_lists(v: &Value, pointer: &str, path: &str) -> FieldResult<Option<(Value, TakenContainers)>> {
    let Some(spec) = v.pointer(pointer) else { return Ok(None) };
    let len = |k: &str| spec.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    if len("containers") <= MANY_CONTAINERS && len("initContainers") <= MANY_CONTAINERS {
        return Ok(None);
    }
    let mut taken = TakenContainers { containers: Vec::new(), init_containers: Vec::new(), images: Vec::new() };
    for (field, out) in [("initContainers", &mut taken.init_containers), ("containers", &mut taken.containers)] {
        for (i, c) in spec.get(field).and_then(Value::as_array).into_iter().flatten().enumerate() {
            take_container(c, &format!("{path}.{field}[{i}]"), out, &mut taken.images)?;
        }
    }
    let keys: Vec<&str> = pointer.split('/').skip(1).collect();
    Ok(Some((without_lists(v, &keys, &["containers", "initContainers"]), taken)))
}

/// A pod spec's volumes as PodSecurity keeps them ([`security::restricted_volume`]).
pub(super) type TakenVolumes = Vec<(String, &'static str)>;

/// When a pod spec (at the JSON `pointer` in `v`, named `path` in errors) has more than
/// [`MANY_CONTAINERS`] volumes: a copy of `v` with the list empty, and the volumes decoded one
/// at a time, each checked as the whole object would have been, only what PodSecurity reads
/// of it kept. k8s-openapi's `Volume` holds every volume source inline, some 16 KB: 38,000
/// volumes decoded with the spec took 640 MB.
pub(super) fn long_volume_list(v: &Value, pointer: &str, path: &str) -> FieldResult<Option<(Value, TakenVolumes)>> {
    let Some(volumes) = v.pointer(pointer).and_then(|s| s.get("volumes")).and_then(Value::as_array).filter(|l| l.len() > MANY_CONTAINERS) else {
        return Ok(None);
    };
    let mut taken = Vec::new();
    for (i, vol) in volumes.iter().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        let vol: core::Volume = typed(vol).map_err(|(p, e)| (if p.is_empty() { at.clone() } else { format!("{at}.{p}") }, e))?;
        taken.extend(crate::objects::security::restricted_volume(&vol));
    }
    let keys: Vec<&str> = pointer.split('/').skip(1).collect();
    Ok(Some((without_lists(v, &keys, &["volumes"]), taken)))
}

/// One container of a long list (at field path `at`) decoded into `out`, its `name=image`
/// into `images`.
fn take_container(c: &Value, at: &str, out: &mut Vec<Container>, images: &mut Vec<String>) -> FieldResult<()> {
    let c: core::Container = typed(c).map_err(|(p, e)| (if p.is_empty() { at.to_string() } else { format!("{at}.{p}") }, e))?;
    out.push(container(&c, &at)?);
    images.push(format!("{}={}", c.name, c.image.unwrap_or_default()));
    Ok(())
}

/// One container list of a pod spec decoded a container at a time as it is read, by a caller
/// that never holds the list whole (the guard reads a review's object from its text): what
/// [`long_container_lists`] makes of it, and its length as compact JSON (what the request
/// size limit measures). [`ContainerLists`] hands them to [`super::decode_with_lists`].
pub struct ContainerList {
    /// The list's field path (`spec.template.spec.containers`).
    path: String,
    containers: Vec<Container>,
    images: Vec<String>,
    /// The first container that does not decode, as [`long_container_lists`] names it; those
    /// after it are only counted.
    error: Option<(String, String)>,
    len: usize,
    json_bytes: usize,
}

impl ContainerList {
    /// The list `field` (`containers`, `initContainers`) of the pod spec at field path `spec`.
    pub fn new(spec: &str, field: &str) -> ContainerList {
        ContainerList { path: format!("{spec}.{field}"), containers: Vec::new(), images: Vec::new(), error: None, len: 0, json_bytes: 0 }
    }

    /// The list's next container.
    pub fn push(&mut self, c: &Value) {
        // Its bytes, and the comma before it.
        self.json_bytes = self.json_bytes.saturating_add(compact_len(c)).saturating_add(usize::from(self.len > 0));
        if self.error.is_none() {
            if let Err(e) = take_container(c, &format!("{}[{}]", self.path, self.len), &mut self.containers, &mut self.images) {
                self.error = Some(e);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A pod spec's two container lists, each read a container at a time ([`ContainerList`]):
/// `None` for one the spec does not have as a list. The object they are decoded with has
/// both lists empty (`[]`) in its tree, as [`long_container_lists`] leaves it.
#[derive(Default)]
pub struct ContainerLists {
    pub init_containers: Option<ContainerList>,
    pub containers: Option<ContainerList>,
}

impl ContainerLists {
    /// What the lists add to the object's compact JSON, beside the `[]` in its tree.
    pub(super) fn json_bytes(&self) -> usize {
        [&self.init_containers, &self.containers].into_iter().flatten().fold(0, |n: usize, l| n.saturating_add(l.json_bytes))
    }

    /// The lists as [`long_container_lists`] takes them: the first error of the init
    /// containers, then of the containers; the images of the init containers first.
    pub(super) fn taken(self) -> FieldResult<TakenContainers> {
        let mut taken = TakenContainers { containers: Vec::new(), init_containers: Vec::new(), images: Vec::new() };
        for (list, out) in [(self.init_containers, &mut taken.init_containers), (self.containers, &mut taken.containers)] {
            let Some(list) = list else { continue };
            if let Some(e) = list.error {
                return Err(e);
            }
            *out = list.containers;
            taken.images.extend(list.images);
        }
        Ok(taken)
    }
}

/// A copy of `v` in which the object at `keys` has the lists `lists` empty (the lists are
/// never copied).
fn without_lists(v: &Value, keys: &[&str], lists: &[&str]) -> Value {
    let Value::Object(map) = v else { return v.clone() };
    let out = map
        .iter()
        .map(|(k, x)| match keys.split_first() {
            Some((first, rest)) if k == first => (k.clone(), without_lists(x, rest, lists)),
            None if lists.contains(&k.as_str()) => (k.clone(), Value::Array(Vec::new())),
            _ => (k.clone(), x.clone()),
        })
        .collect();
    Value::Object(out)
}

/// [`pod_spec`], with container lists already decoded when they were long.
pub(super) fn lean_pod_spec(spec: &core::PodSpec, path: &str, taken: Option<TakenContainers>, volumes: Option<TakenVolumes>) -> FieldResult<Pod> {
    let (containers, init_containers) = match taken {
        Some(t) => (t.containers, t.init_containers),
        None => (
            spec.containers.iter().enumerate().map(|(i, c)| container(c, &format_args!("{path}.containers[{i}]"))).collect::<FieldResult<Vec<_>>>()?,
            spec.init_containers
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| container(c, &format_args!("{path}.initContainers[{i}]")))
                .collect::<FieldResult<Vec<_>>>()?,
        ),
    };
    let (requests, limits) = spec.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
    let (mut containers, mut init_containers) = (containers, init_containers);
    if spec.host_network == Some(true) {
        crate::objects::security::default_host_network_ports(&mut containers, &spec.containers);
        crate::objects::security::default_host_network_ports(&mut init_containers, spec.init_containers.as_deref().unwrap_or_default());
    }
    Ok(Pod {
        containers: containers.into(),
        init_containers: init_containers.into(),
        ephemeral_containers: spec.ephemeral_containers.iter().flatten().map(ephemeral_container).collect(),
        overhead: resource_list(&spec.overhead, &format_args!("{path}.overhead"), true)?,
        pod_requests: resource_list(requests, &format_args!("{path}.resources.requests"), true)?,
        pod_limits: resource_list(limits, &format_args!("{path}.resources.limits"), true)?,
        pod_level_shared: Vec::new(),
        priority_class_name: spec.priority_class_name.clone().unwrap_or_default(),
        service_account_name: spec.service_account_name.clone().filter(|s| !s.is_empty()).or_else(|| spec.service_account.clone()).unwrap_or_default(),
        active_deadline_seconds: spec.active_deadline_seconds,
        // Kept when empty: before 1.38 RuntimeClass admission refuses it (no class has that
        // name), from 1.38 pod validation does.
        runtime_class_name: spec.runtime_class_name.clone(),
        cross_namespace_affinity: cross_namespace_affinity(&spec.affinity),
        phase: None,
        status_qos_class: None,
        resource_claim_templates: spec
            .resource_claims
            .iter()
            .flatten()
            .filter_map(|c| c.resource_claim_template_name.clone().filter(|t| !t.is_empty()).map(|t| (c.name.clone(), t)))
            .collect(),
        container_statuses: BTreeMap::new(),
        resize_infeasible: false,
        source: crate::objects::Source::default(),
        claims_created: vec![],
        security: crate::objects::security::pod(spec, volumes),
        placement: placement(spec),
    })
}

/// The pod's nodeSelector and tolerations, when it has any.
fn placement(spec: &core::PodSpec) -> Option<Box<crate::objects::Placement>> {
    let node_selector = spec.node_selector.clone().unwrap_or_default();
    let tolerations: Vec<crate::objects::Toleration> = spec
        .tolerations
        .iter()
        .flatten()
        .map(|t| crate::objects::Toleration {
            key: t.key.clone().unwrap_or_default(),
            operator: t.operator.clone().unwrap_or_default(),
            value: t.value.clone().unwrap_or_default(),
            effect: t.effect.clone().unwrap_or_default(),
        })
        .collect();
    (!node_selector.is_empty() || !tolerations.is_empty()).then(|| Box::new(crate::objects::Placement { node_selector, tolerations }))
}

/// The container statuses' resources of a pod object (for in-place resize).
fn pod_status(status: &core::PodStatus, path: &str) -> FieldResult<(BTreeMap<String, ContainerStatusResources>, bool)> {
    let mut out = BTreeMap::new();
    for (field, list) in [("containerStatuses", &status.container_statuses), ("initContainerStatuses", &status.init_container_statuses)] {
        for (i, cs) in list.iter().flatten().enumerate() {
            let p = format!("{path}.{field}[{i}]");
            let (requests, limits) = cs.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
            let found = ContainerStatusResources {
                requests: resource_list(requests, &format_args!("{p}.resources.requests"), true)?,
                limits: resource_list(limits, &format_args!("{p}.resources.limits"), true)?,
                allocated: resource_list(&cs.allocated_resources, &format_args!("{p}.allocatedResources"), true)?,
                has_resources: cs.resources.is_some(),
                has_requests: requests.is_some(),
                has_limits: limits.is_some(),
                has_allocated: cs.allocated_resources.is_some(),
            };
            // A name is looked up among the containers' statuses first.
            out.entry(cs.name.clone()).or_insert(found);
        }
    }
    // The first PodResizePending condition says whether the resize is Infeasible.
    let infeasible = status.conditions.iter().flatten().find(|c| c.type_ == "PodResizePending").is_some_and(|c| c.reason.as_deref() == Some("Infeasible"));
    Ok((out, infeasible))
}

impl Doc<'_> {
    pub(super) fn pod(&self) -> FieldResult<(Meta, Body)> {
        let p: core::Pod = typed(self.v)?;
        let spec = p.spec.as_ref().ok_or_else(|| ("spec".to_string(), "Required value".to_string()))?;
        let mut pod = lean_pod_spec(spec, "spec", self.taken.take(), self.volumes.take())?;
        pod.phase = p.status.as_ref().and_then(|s| s.phase.clone());
        pod.status_qos_class = p.status.as_ref().and_then(|s| s.qos_class.clone());
        pod.claims_created = p
            .status
            .iter()
            .flat_map(|s| s.resource_claim_statuses.iter().flatten())
            .filter(|c| c.resource_claim_name.as_deref().is_some_and(|n| !n.is_empty()))
            .map(|c| c.name.clone())
            .collect();
        if let Some(st) = &p.status {
            (pod.container_statuses, pod.resize_infeasible) = pod_status(st, "status")?;
        }
        Ok((meta(p.metadata), Body::Pod(pod)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::decode::tests::one;

    /// A pod spec's text with `n` containers, the first one `first`.
    fn many_containers(first: &str, n: usize) -> String {
        let rest: String = (1..n).map(|i| format!(", {{name: c{i}, image: x{i}, resources: {{requests: {{cpu: {i}m}}}}}}")).collect();
        format!("{{containers: [{first}{rest}], initContainers: [{{name: i, image: busybox, resources: {{limits: {{memory: 1Gi}}}}}}]}}")
    }

    #[test]
    fn long_container_lists_decode_as_short_ones_do() {
        let n = MANY_CONTAINERS + 5;
        let spec = many_containers("{name: c0, image: x0}", n);
        let pod = one(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {spec}\n")).unwrap();
        // The same spec through k8s-openapi's whole PodSpec, as a short list is decoded.
        let typed_spec: core::PodSpec = serde_json::from_value(parse_str("s.yaml", &spec).unwrap()[0].value.clone()).unwrap();
        let Body::Pod(got) = &pod.body else { panic!("{pod:?}") };
        assert_eq!(*got, pod_spec(&typed_spec, "spec").unwrap());
        assert_eq!(got.containers.len(), n);
        let d = one(&format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{selector: {{}}, template: {{spec: {spec}}}}}\n")).unwrap();
        let Body::Workload(w) = &d.body else { panic!("{d:?}") };
        assert_eq!(w.template, *got);
        assert_eq!(w.images.len(), n + 1);
        assert_eq!((w.images[0].as_str(), w.images[n].as_str()), ("i=busybox", &*format!("c{}=x{}", n - 1, n - 1)));
        // A mistake in one of many containers is named as in a short list.
        for (bad, field) in [
            ("{image: x}", "containers[0].name"),
            ("{name: a, resources: {limits: {memory: 1K}}}", "containers[0].resources.limits.memory"),
            ("{name: a, ports: 3}", "containers[0].ports"),
        ] {
            for (kind, head, prefix) in [
                ("Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: ", "spec."),
                (
                    "CronJob",
                    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {schedule: x, jobTemplate: {spec: {template: {spec: ",
                    "spec.jobTemplate.spec.template.spec.",
                ),
            ] {
                let close = if kind == "CronJob" { "}}}}" } else { "" };
                let short = one(&format!("{head}{{containers: [{bad}]}}{close}\n")).unwrap_err();
                let long = one(&format!("{head}{}{close}\n", many_containers(bad, n))).unwrap_err();
                assert_eq!(long.field.as_deref(), Some(&*format!("{prefix}{field}")), "{long}");
                assert_eq!((&long.field, long.to_string()), (&short.field, short.to_string()), "{kind}: {bad}");
            }
        }
    }

    #[test]
    fn long_volume_lists_decode_as_short_ones_do() {
        // Every volume type PodSecurity tells apart, in turns, and a bad one where asked.
        let kinds = [", emptyDir: {}", ", hostPath: {path: /x}", ", configMap: {name: c}", ", nfs: {server: s, path: /}", ""];
        let many = |first: &str, n: usize| {
            let rest: String = (1..n).map(|i| format!(", {{name: v{i}{}}}", kinds[i % kinds.len()])).collect();
            format!("{{containers: [{{name: c, image: x}}], volumes: [{first}{rest}]}}")
        };
        let n = MANY_CONTAINERS + 5;
        let spec = many("{name: v0, hostPath: {path: /}}", n);
        let pod = one(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {spec}\n")).unwrap();
        // The same spec through k8s-openapi's whole PodSpec, as a short list is decoded.
        let typed_spec: core::PodSpec = serde_json::from_value(parse_str("s.yaml", &spec).unwrap()[0].value.clone()).unwrap();
        let Body::Pod(got) = &pod.body else { panic!("{pod:?}") };
        assert_eq!(*got, pod_spec(&typed_spec, "spec").unwrap());
        let restricted = &got.security.as_ref().unwrap().restricted_volumes;
        assert_eq!(restricted.len(), 1 + (1..n).filter(|i| matches!(i % kinds.len(), 1 | 3)).count(), "{:?}", &restricted[..5]);
        assert_eq!(restricted[0], ("v0".to_string(), "hostPath"));
        let d = one(&format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{selector: {{}}, template: {{spec: {spec}}}}}\n")).unwrap();
        let Body::Workload(w) = &d.body else { panic!("{d:?}") };
        assert_eq!(w.template, *got);
        // A mistake in one of many volumes is named as in a short list.
        for (bad, field) in [("{name: a, hostPath: 3}", "volumes[0].hostPath"), ("{name: a, hostPath: {path: 3}}", "volumes[0].hostPath.path")] {
            for (kind, head, prefix) in [
                ("Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: ", "spec."),
                ("Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: ", "spec.template.spec."),
            ] {
                let close = if kind == "Deployment" { "}}" } else { "" };
                let short = one(&format!("{head}{{containers: [{{name: c, image: x}}], volumes: [{bad}]}}{close}\n")).unwrap_err();
                let long = one(&format!("{head}{}{close}\n", many(bad, n))).unwrap_err();
                assert_eq!(long.field.as_deref(), Some(&*format!("{prefix}{field}")), "{long}");
                assert_eq!((&long.field, long.to_string()), (&short.field, short.to_string()), "{kind}: {bad}");
            }
        }
    }

    #[test]
    fn container_lists_read_by_the_caller_decode_as_long_lists_do() {
        let n = MANY_CONTAINERS + 5;
        for first in ["{name: c0, image: x0}", "{image: x}", "{name: a, resources: {limits: {memory: 1K}}}"] {
            let spec = many_containers(first, n);
            let text = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{selector: {{}}, template: {{spec: {spec}}}}}\n");
            let doc = &parse_str("t.yaml", &text).unwrap()[0];
            // The lists taken out of the tree a container at a time, `[]` left in their place.
            let path = crate::objects::container_lists_at("apps/v1", "Deployment").unwrap();
            let mut stripped = doc.clone();
            let at = stripped.value.pointer_mut("/spec/template/spec").unwrap();
            let mut lists = ContainerLists::default();
            for (field, slot) in [("containers", &mut lists.containers), ("initContainers", &mut lists.init_containers)] {
                let Value::Array(items) = std::mem::replace(&mut at[field], Value::Array(vec![])) else { panic!() };
                let mut list = ContainerList::new(path, field);
                items.iter().for_each(|c| list.push(c));
                assert_eq!(list.len(), items.len());
                *slot = Some(list);
            }
            let got = crate::objects::decode_with_lists(&stripped, lists).map_err(|e| (e.field.clone(), e.to_string()));
            assert_eq!(got, crate::objects::decode(doc).map_err(|e| (e.field.clone(), e.to_string())), "{first}");
        }
    }

    #[test]
    fn cross_namespace_affinity_is_detected() {
        let base = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a}]\n";
        let cases = [
            ("", false),
            ("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: k}]}}\n", false),
            ("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: k, namespaces: [other]}]}}\n", true),
            ("  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: k, namespaceSelector: {}}}]}}\n", true),
        ];
        for (extra, want) in cases {
            let Body::Pod(p) = one(&format!("{base}{extra}")).unwrap().body else { panic!() };
            assert_eq!(p.cross_namespace_affinity, want, "{extra}");
        }
    }
}
