//! What a document's answer needs that the state lacks (see [`Lacking`]): a pod naming a
//! PriorityClass nobody could list, a claim naming no StorageClass where a quota charges per
//! class. Only what can change the answer counts: a pod naming no class, in a namespace
//! where no quota selects pods by class, needs no PriorityClass.

use super::state::{ClusterState, Lacking};
use super::Undecided;

use crate::admission::priority::SYSTEM_PRIORITY_CLASSES;
use crate::admission::NamedQuota;
use crate::objects::{Body, Object, Pod, Pvc};
use crate::version::Rules;

/// The beta annotation a claim can name its class with instead of `storageClassName`.
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// What deciding `obj` in namespace `ns` needs that the state lacks, each with why.
pub(super) fn lacking_for(obj: &Object, state: &ClusterState, ns: &str, rules: &Rules) -> Vec<Undecided> {
    let quotas = state.quotas.get(ns).map(Vec::as_slice).unwrap_or_default();
    let mut out = Vec::new();
    let mut need = |lacking: Lacking, why: String| {
        if state.lacks(lacking) && !out.iter().any(|u: &Undecided| u.lacking == Some(lacking) && u.why == why) {
            out.push(Undecided { lacking: Some(lacking), why, late: false });
        }
    };
    match &obj.body {
        Body::Pod(p) => pod_needs(p, Who::ONE, quotas, state, ns, rules, &mut need),
        Body::Workload(w) => {
            pod_needs(&w.template, Who::MANY, quotas, state, ns, rules, &mut need);
            need(
                Lacking::VerticalPodAutoscalers,
                "a VerticalPodAutoscaler may write its pods' requests, and the namespace's VerticalPodAutoscalers are not known".into(),
            );
            for (name, pvc) in &w.volume_claim_templates {
                pvc_needs(pvc, false, &format!("its claims {name}-*"), quotas, &mut need);
            }
        }
        Body::PersistentVolumeClaim(p) => {
            pvc_needs(p, obj.meta.annotations.contains_key(BETA_STORAGE_CLASS), "the claim", quotas, &mut need);
            if let Some(Body::PersistentVolumeClaim(old)) = state.existing_for(ns, obj).map(|o| &o.body) {
                if old.bound && crate::admission::pvc_resize::pvc_grows(old, p) {
                    need(
                        Lacking::StorageClasses,
                        "the bound claim grows, which its StorageClass must allow (allowVolumeExpansion), and the cluster's StorageClasses are not known"
                            .into(),
                    );
                }
            }
        }
        Body::ResourceClaim(_) if charges_extended(quotas) && rules.dra_claim_extended_resources => need(
            Lacking::DeviceClasses,
            "the claim's devices are charged as a DeviceClass's extended resource when the class has one, and the cluster's DeviceClasses are not known".into(),
        ),
        _ => {}
    }
    out
}

/// Whether a quota of the namespace limits extended resources (`requests.example.com/gpu`,
/// `requests.deviceclass.resource.kubernetes.io/gpu`): what DeviceClasses decide.
fn charges_extended(quotas: &[NamedQuota]) -> bool {
    quotas.iter().any(|q| q.quota.status_hard.keys().chain(q.quota.spec_hard.keys()).any(|k| k.strip_prefix("requests.").is_some_and(|r| r.contains('/'))))
}

/// The first quota that selects pods by PriorityClass.
fn selects_by_class(quotas: &[NamedQuota]) -> Option<&str> {
    quotas.iter().find(|q| q.quota.selectors().iter().any(|s| s.scope_name == "PriorityClass")).map(|q| q.name.as_str())
}

/// The pods a document makes, in words: the pod itself, or a workload's.
struct Who {
    who: &'static str,
    names: &'static str,
    them: &'static str,
}

impl Who {
    const ONE: Who = Who { who: "the pod", names: "names", them: "it" };
    const MANY: Who = Who { who: "its pods", names: "name", them: "them" };
}

fn pod_needs(pod: &Pod, w: Who, quotas: &[NamedQuota], state: &ClusterState, ns: &str, rules: &Rules, need: &mut impl FnMut(Lacking, String)) {
    let Who { who, names, them } = w;
    let class = pod.priority_class_name.as_str();
    if class.is_empty() {
        if let Some(q) = selects_by_class(quotas) {
            need(
                Lacking::PriorityClasses,
                format!(
                    "{who} {names} no PriorityClass, so the global default class (if there is one) is given to {them}, and quota {q} selects pods by class; the cluster's PriorityClasses are not known"
                ),
            );
        }
    } else if !SYSTEM_PRIORITY_CLASSES.contains(&class) {
        need(
            Lacking::PriorityClasses,
            format!(
                "{who} {names} PriorityClass {class:?}, and the cluster's PriorityClasses are not known: the server refuses {them} if there is no such class (no PriorityClass with name {class} was found)"
            ),
        );
    }
    // Every namespace has `default` (the controller makes it at once, the plugin waits for
    // it): only another name needs the namespace's ServiceAccounts.
    let sa = pod.service_account_name.as_str();
    let created = || state.service_accounts_created.contains(&(ns.to_string(), sa.to_string()));
    if !sa.is_empty() && sa != crate::admission::service_account::DEFAULT && !state.service_accounts.contains_key(ns) && !created() {
        need(
            Lacking::ServiceAccounts,
            format!(
                "{who} {names} ServiceAccount {sa:?}, and the namespace's ServiceAccounts are not known: the server refuses {them} if there is no such ServiceAccount (error looking up service account {ns}/{sa}: serviceaccount {sa:?} not found)"
            ),
        );
    }
    // An empty name is refused whatever the classes are.
    if let Some(rc) = pod.runtime_class_name.as_ref().filter(|rc| !rc.is_empty()) {
        need(
            Lacking::RuntimeClasses,
            format!("{who} {names} RuntimeClass {rc:?}, and the cluster's RuntimeClasses are not known: its overhead is charged, and the server refuses {them} if there is no such class"),
        );
    }
    // A pod's own extended resources are charged whatever the classes; its claims' devices
    // are charged as their class's extended resource when it has one.
    if !pod.resource_claim_templates.is_empty() && rules.dra_claim_extended_resources && charges_extended(quotas) {
        need(
            Lacking::DeviceClasses,
            format!("the claims of {who} are charged as their DeviceClass's extended resource when it has one, and the cluster's DeviceClasses are not known"),
        );
    }
    for (_, template) in &pod.resource_claim_templates {
        let key = (ns.to_string(), "resourceclaimtemplates.resource.k8s.io".to_string(), template.clone());
        if !state.existing.contains_key(&key) {
            need(
                Lacking::ResourceClaimTemplates,
                format!("{who} {names} ResourceClaimTemplate {template:?}, and the namespace's ResourceClaimTemplates are not known: its claims are charged to the quotas"),
            );
        }
    }
}

fn pvc_needs(pvc: &Pvc, annotated: bool, who: &str, quotas: &[NamedQuota], need: &mut impl FnMut(Lacking, String)) {
    let names = if who.starts_with("its claims") { "name" } else { "names" };
    if pvc.storage_class_name.is_some() || annotated {
        return;
    }
    let per_class = quotas.iter().find(|q| q.quota.status_hard.keys().chain(q.quota.spec_hard.keys()).any(|k| k.contains(".storageclass.storage.k8s.io/")));
    if let Some(q) = per_class {
        need(
            Lacking::StorageClasses,
            format!("{who} {names} no StorageClass, so the default class (if there is one) is set, and quota {} charges per class; the cluster's StorageClasses are not known", q.name),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::decode;

    fn objects(text: &str) -> Vec<Object> {
        parse_str("x.yaml", text).unwrap().iter().map(|d| decode(d).unwrap()).collect()
    }

    const PLAIN: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ns}\nspec: {hard: {pods: '9'}}\nstatus: {hard: {pods: '9'}, used: {pods: '0'}}\n";
    const BY_CLASS: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gold, namespace: ns}\nspec: {hard: {pods: '9'}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [gold]}]}}\nstatus: {hard: {pods: '9'}, used: {pods: '0'}}\n";
    const PER_CLASS: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: disks, namespace: ns}\nspec: {hard: {fast.storageclass.storage.k8s.io/requests.storage: 9Gi}}\nstatus: {hard: {fast.storageclass.storage.k8s.io/requests.storage: 9Gi}, used: {fast.storageclass.storage.k8s.io/requests.storage: '0'}}\n";
    const GPUS: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: ns}\nspec: {hard: {requests.example.com/gpu: '2'}}\nstatus: {hard: {requests.example.com/gpu: '2'}, used: {requests.example.com/gpu: '0'}}\n";

    fn pod(spec: &str) -> String {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{{spec}containers: [{{name: a, image: x}}]}}\n")
    }

    #[test]
    fn only_what_can_change_the_answer_is_needed() {
        let pvc = |class: &str| {
            format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c}}\nspec: {{{class}resources: {{requests: {{storage: 1Gi}}}}}}\n")
        };
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: {priorityClassName: gold, containers: [{name: a, image: x}]}}}\n";
        let claimed = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resourceClaims: [{name: g, resourceClaimTemplateName: gpu}], containers: [{name: a, image: x}]}\n";
        let bound = format!("{PLAIN}---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c, namespace: ns}}\nspec: {{storageClassName: fast, resources: {{requests: {{storage: 1Gi}}}}}}\nstatus: {{phase: Bound}}\n");
        let grown = pvc("storageClassName: fast, ").replace("1Gi", "2Gi");
        let cases: Vec<(&str, &str, String, Vec<Lacking>)> = vec![
            ("a bound claim grows", &bound, grown, vec![Lacking::StorageClasses]),
            ("a bound claim keeps its size", &bound, pvc("storageClassName: fast, "), vec![]),
            ("a pod naming no class, no quota by class", PLAIN, pod(""), vec![]),
            ("a pod naming no class, a quota by class", BY_CLASS, pod(""), vec![Lacking::PriorityClasses]),
            ("a pod naming a class", PLAIN, pod("priorityClassName: gold, "), vec![Lacking::PriorityClasses]),
            ("a pod naming a system class", PLAIN, pod("priorityClassName: system-node-critical, "), vec![]),
            ("a pod naming a RuntimeClass", PLAIN, pod("runtimeClassName: kata, "), vec![Lacking::RuntimeClasses]),
            ("a pod naming a ServiceAccount", PLAIN, pod("serviceAccountName: builder, "), vec![Lacking::ServiceAccounts]),
            ("a pod naming the default ServiceAccount", PLAIN, pod("serviceAccountName: default, "), vec![]),
            ("a workload's pods naming a class", PLAIN, deployment.to_string(), vec![Lacking::PriorityClasses]),
            ("a claim naming no class, a quota per class", PER_CLASS, pvc(""), vec![Lacking::StorageClasses]),
            ("a claim naming its class", PER_CLASS, pvc("storageClassName: fast, "), vec![]),
            ("a claim naming no class, no quota per class", PLAIN, pvc(""), vec![]),
            ("a pod's claims, a quota on an extended resource", GPUS, claimed.to_string(), vec![Lacking::DeviceClasses, Lacking::ResourceClaimTemplates]),
            ("a pod's claims, no quota on an extended resource", PLAIN, claimed.to_string(), vec![Lacking::ResourceClaimTemplates]),
        ];
        for (what, quotas, doc, want) in cases {
            let mut state = ClusterState::from_objects(objects(quotas), "ns");
            state.forget(Lacking::ResourceClaimTemplates);
            let obj = objects(&doc).remove(0);
            let got: Vec<Lacking> = lacking_for(&obj, &state, "ns", &Rules::current()).iter().filter_map(|u| u.lacking).collect();
            assert_eq!(got, want, "{what}");
            // A state that holds every kind needs nothing.
            Lacking::ALL.into_iter().for_each(|k| state.know_all(k));
            state.service_accounts.insert("ns".into(), ["builder".to_string()].into());
            assert!(lacking_for(&obj, &state, "ns", &Rules::current()).is_empty(), "{what}: with every kind known");
        }
    }
}
