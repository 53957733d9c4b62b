//! Rule table, `why`: from a workload's status and events and the quota state, the verdict, the
//! pods waiting and the smallest change. The messages are the server's (docs/semantics.md §2.2).

mod support;

use kubectl_quota_engine::why::{self, Event, Verdict};
use support::*;

fn explain(state: &[String], workload: &str, status: serde_json::Value, events: &[Event]) -> why::WhyReport {
    let cluster = ClusterState::from_objects(decode("state.yaml", &cluster(state)), NS);
    let mut obj = decode("w.yaml", workload).remove(0);
    obj.meta.namespace = Some(NS.into());
    let mut raw = manifest::parse_str("w.yaml", workload).unwrap().remove(0).value;
    raw["status"] = status;
    why::explain(&obj, &raw, &[], events, &cluster, kubectl_quota_engine::version::Rules::current())
}

fn failed(message: &str) -> Event {
    Event { object: "replicaset/web-1".into(), reason: "FailedCreate".into(), message: message.into(), count: 3, last_seen: "2026-01-01T00:00:00Z".into() }
}

/// (what, state, workload status, events, verdict, waiting, changes).
type Row<'a> = (&'a str, Vec<String>, serde_json::Value, Vec<Event>, Verdict, i32, Vec<&'a str>);

#[test]
fn why_names_the_quota_the_waiting_pods_and_the_smallest_change() {
    let cpu = pod("p").app("app", "requests: {cpu: 300m}");
    let web = workload("Deployment", "web", "replicas: 5", &cpu);
    let quota_msg =
        "Error creating: pods \"web-1-x\" is forbidden: exceeded quota: q, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1";
    let rows: Vec<Row> = vec![
        (
            "stuck on cpu: raise by the next pod's need or all waiting, or lower the request into what is left",
            vec![quota("q", "", "requests.cpu=1/900m")],
            serde_json::json!({"replicas": 3}),
            vec![failed(quota_msg)],
            Verdict::BlockedByQuota,
            2,
            vec![
                "raise quota q's requests.cpu by 200m (to 1200m) to admit the next pod, or by 500m (to 1500m) for all 2 waiting",
                "or lower container app's requests.cpu from 300m to 100m (quota q has 100m left)",
            ],
        ),
        (
            "quota full: only raising helps",
            vec![quota("q", "", "requests.cpu=900m/900m")],
            serde_json::json!({"replicas": 3}),
            vec![failed(quota_msg)],
            Verdict::BlockedByQuota,
            2,
            vec![
                "raise quota q's requests.cpu by 300m (to 1200m) to admit the next pod, or by 600m (to 1500m) for all 2 waiting",
                "quota q has no requests.cpu left (900m used of 900m): only raising it or freeing usage helps",
            ],
        ),
        ("every pod exists", vec![quota("q", "", "requests.cpu=4/1500m")], serde_json::json!({"replicas": 5}), vec![], Verdict::NotBlocked, 0, vec![]),
        (
            "missing for another reason the server gave",
            vec![quota("q", "", "requests.cpu=4/900m")],
            serde_json::json!({"replicas": 3}),
            vec![failed("Error creating: pods \"web-1-x\" is forbidden: error looking up service account ns/robot: serviceaccount \"robot\" not found")],
            Verdict::BlockedOther,
            2,
            vec!["create ServiceAccount robot in namespace ns, or set serviceAccountName to one that exists"],
        ),
        ("missing and nothing says why", vec![quota("q", "", "requests.cpu=4/900m")], serde_json::json!({"replicas": 3}), vec![], Verdict::Unknown, 2, vec![]),
    ];
    let mut t = Table::default();
    for (what, state, status, events, verdict, waiting, changes) in rows {
        let r = explain(&state, &web, status, &events);
        t.row(what, format!("{:?} {} {:?}", r.verdict, r.waiting, r.changes), format!("{verdict:?} {waiting} {changes:?}"));
    }
    t.done();
}

/// (what, state, workload, status, events, blocker, what was replayed, changes).
type Blocked<'a> = (&'a str, Vec<String>, String, serde_json::Value, Vec<Event>, &'a str, &'a str, Vec<&'a str>);

#[test]
fn why_names_every_blocker_with_its_fix_not_only_quota() {
    let big = pod("p").app("app", "requests: {cpu: 500m}, limits: {cpu: 2}").app("side", "requests: {cpu: 100m}, limits: {cpu: 500m}");
    let web = workload("Deployment", "web", "replicas: 3", &big);
    let claims = "replicas: 3, volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 8Gi}}}}]";
    let db = workload("StatefulSet", "db", claims, &pod("p").app("app", "requests: {cpu: 500m}"));
    let claim_refused = "create Claim data-db-1 for Pod db-1 in StatefulSet db failed error: persistentvolumeclaims \"data-db-1\" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 8Gi";
    let quota_said = "pods \"db-1\" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1";
    let privileged = workload("Deployment", "priv", "replicas: 1", &pod("p").app("app", "").with("hostNetwork: true"));
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {pod-security.kubernetes.io/enforce: baseline}}\n".to_string();
    let policy_said = "pods \"priv-1\" is forbidden: ValidatingAdmissionPolicy 'limits' with binding 'limits' denied request: every container must set limits";
    let rows: Vec<Blocked> = vec![
        (
            "a LimitRange maximum on containers: lower the one container over it, or raise the maximum",
            vec![limit_range("{type: Container, max: {cpu: '1'}}")],
            web.clone(),
            serde_json::json!({"replicas": 0}),
            vec![],
            "LimitRange",
            "Pod",
            vec!["lower limits.cpu to 1 or less in container app, or raise LimitRange lr's max cpu per Container to 2"],
        ),
        (
            "a StatefulSet's claim over a LimitRange maximum is refused before its pod, even where quota is full too",
            vec![limit_range("{type: PersistentVolumeClaim, max: {storage: 5Gi}}"), quota("q", "", "requests.cpu=1/1")],
            db.clone(),
            serde_json::json!({"replicas": 1, "readyReplicas": 1}),
            vec![failed(claim_refused)],
            "LimitRange",
            "PersistentVolumeClaim",
            vec![
                "lower requests.storage to 5Gi or less in the claim, or raise LimitRange lr's max storage per PersistentVolumeClaim to 8Gi",
                "then raise quota q's requests.cpu by 500m (to 1500m) to admit the next pod, or by 1 (to 2) for all 2 waiting",
                "then quota q has no requests.cpu left (1 used of 1): only raising it or freeing usage helps",
            ],
        ),
        (
            "the server last said quota, the claim is what refuses now: the replay names it and says why they differ",
            vec![limit_range("{type: PersistentVolumeClaim, max: {storage: 5Gi}}")],
            db,
            serde_json::json!({"replicas": 1, "readyReplicas": 1}),
            vec![failed(quota_said)],
            "LimitRange",
            "PersistentVolumeClaim",
            vec!["lower requests.storage to 5Gi or less in the claim, or raise LimitRange lr's max storage per PersistentVolumeClaim to 8Gi"],
        ),
        (
            "PodSecurity: the check the pod fails, then the namespace's level",
            vec![namespace],
            privileged.clone(),
            serde_json::json!({"replicas": 0}),
            vec![],
            "PodSecurity",
            "Pod",
            vec![
                "PodSecurity baseline:latest forbids host namespaces: hostNetwork=true",
                "or lower the namespace's pod-security.kubernetes.io/enforce level (it is baseline)",
            ],
        ),
        (
            "a policy the replay cannot see: the server's word, and the policy's message as the fix",
            vec![],
            privileged,
            serde_json::json!({"replicas": 0}),
            vec![failed(policy_said)],
            "policy",
            "Pod",
            vec!["meet policy limits: every container must set limits"],
        ),
    ];
    let mut t = Table::default();
    for (what, state, w, status, events, blocker, replayed, changes) in rows {
        let r = explain(&state, &w, status, &events);
        let got_blocker = r.blocker.map(|b| b.name()).unwrap_or("-");
        let got_replayed = r.replay.as_ref().map(|d| d.kind.as_str()).unwrap_or("-");
        t.row(what, format!("{:?} {got_blocker} {got_replayed} {:?}", r.verdict, r.changes), format!("BlockedOther {blocker} {replayed} {changes:?}"));
        if what.starts_with("the server last said quota") {
            assert!(r.notes.iter().any(|n| n.contains("another reason (quota) than the replay now (LimitRange)")), "{what}: {:?}", r.notes);
        }
    }
    t.done();
}

#[test]
fn a_pod_without_the_request_a_quota_requires_is_told_what_to_add() {
    let web = workload("Deployment", "web", "replicas: 2", &pod("p"));
    let r = explain(&[quota("q", "", "requests.cpu=4/0")], &web, serde_json::json!({"replicas": 0}), &[]);
    assert_eq!(r.verdict, Verdict::BlockedByQuota);
    assert!(r.changes.iter().any(|c| c.starts_with("add resources.requests.cpu to container(s) app")), "{:?}", r.changes);
}

#[test]
fn a_refused_new_replicaset_is_offered_only_fixes_that_would_free_a_place() {
    let app = pod("p").app("app", "requests: {cpu: 100m}");
    let web = workload("Deployment", "web", "replicas: 1", &app);
    let message = "Failed to create new replica set \"web-2\": replicasets.apps \"web-2\" is forbidden: exceeded quota: objs, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1";
    let state = vec![quota("objs", "", "count/replicasets.apps=1/1")];
    let rs = |name: &str, replicas: i64| serde_json::json!({"metadata": {"name": name}, "spec": {"replicas": replicas}, "status": {"replicas": replicas}});
    let raise = "raise quota objs's count/replicasets.apps by 1 (to 2) to admit the next ReplicaSet";
    let rows: Vec<(&str, Vec<serde_json::Value>, Vec<String>)> = vec![
        // The lab's case: the only old ReplicaSet is the live one; no history to free, and a
        // lower revisionHistoryLimit would change nothing.
        ("only the live ReplicaSet", vec![rs("web-1", 1)], vec![raise.into()]),
        (
            "history scaled down to 0: deleting it frees a place",
            vec![rs("web-1", 1), rs("web-0", 0)],
            vec![
                raise.into(),
                "or delete an old ReplicaSet of the Deployment scaled down to 0, kept as rollout history: `kubectl delete replicaset web-0`".into(),
            ],
        ),
    ];
    let cluster = ClusterState::from_objects(decode("state.yaml", &cluster(&state)), NS);
    let mut obj = decode("w.yaml", &web).remove(0);
    obj.meta.namespace = Some(NS.into());
    let mut raw = manifest::parse_str("w.yaml", &web).unwrap().remove(0).value;
    raw["metadata"]["generation"] = 2.into();
    raw["status"] = serde_json::json!({"observedGeneration": 1, "replicas": 1, "conditions": [{"type": "Progressing", "status": "False", "reason": "ReplicaSetCreateError", "message": message}]});
    let mut t = Table::default();
    for (what, children, changes) in rows {
        let r = why::explain(&obj, &raw, &children, &[], &cluster, kubectl_quota_engine::version::Rules::current());
        t.row(what, format!("{:?} {:?}", r.verdict, r.changes), format!("{:?} {changes:?}", Verdict::BlockedByQuota));
    }
    t.done();
}

#[test]
fn a_suspended_job_kueue_holds_is_explained_in_kueues_words_with_what_would_let_it_in() {
    let kueue = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: batch}\nspec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu], flavors: [{name: default, resources: [{name: cpu, nominalQuota: '10'}]}]}]}\nstatus: {flavorsReservation: [{name: default, resources: [{name: cpu, total: '9', borrowed: '0'}]}]}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team}\nspec: {clusterQueue: batch}\n".to_string();
    let job = |queue: &str, cpu: &str| {
        workload("Job", "train", "suspend: true", &pod("p").app("main", &format!("requests: {{cpu: '{cpu}'}}")).with("restartPolicy: Never"))
            .replace("metadata: {name: train}", &format!("metadata: {{name: train, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}"))
    };
    let cases: Vec<(&str, String, Verdict, Vec<&str>)> = vec![
        (
            "waits for 1 cpu",
            job("team", "2"),
            Verdict::HeldByKueue,
            vec!["ClusterQueue batch needs 1 more cpu in flavor default: raise its nominalQuota there by 1, or wait for its admitted Workloads to finish"],
        ),
        (
            "never fits",
            job("team", "12"),
            Verdict::HeldByKueue,
            vec!["the Job asks for more cpu than flavor default of ClusterQueue batch ever holds (10): lower its requests or parallelism, or raise the nominalQuota"],
        ),
        (
            "no such LocalQueue",
            job("other", "1"),
            Verdict::HeldByKueue,
            vec!["create LocalQueue other in namespace ns (naming a ClusterQueue), or label the Job with a LocalQueue that exists"],
        ),
        ("room now: Kueue unsuspends it; nothing refused it", job("team", "1"), Verdict::Unknown, vec![]),
    ];
    let mut t = Table::default();
    for (what, w, verdict, changes) in cases {
        let r = explain(std::slice::from_ref(&kueue), &w, serde_json::json!({}), &[]);
        t.row(what, format!("{:?} {:?}", r.verdict, r.changes), format!("{verdict:?} {changes:?}"));
    }
    t.done();
}
