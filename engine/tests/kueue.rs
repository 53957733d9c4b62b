//! Rule table, Kueue: what a Job in one of Kueue's queues gets from its ClusterQueue now, in
//! Kueue's words (docs/kueue.md), and what its pods then meet. The first rows are answers a
//! real Kueue v0.17.0 gave on a v1.37.2 server (docs/kueue.md, "Checked against Kueue").

mod support;

use kubectl_quota_engine::kueue::Decision;
use support::*;

const FLAVORS: &str = "\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {instance: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {instance: spot}
  nodeTaints: [{key: instance, value: spot, effect: NoSchedule}]
";

/// A ClusterQueue `cq` whose one resource group covers `covered` with `flavors` (`name:
/// cpu=10,memory=64Gi`, in order), `reserved` (`flavor: cpu=9`) and more `spec` fields; and
/// LocalQueue `q` in namespace ns, whose labels are `team: ml`.
fn kueue_state(covered: &str, flavors: &[&str], reserved: &[&str], spec: &str) -> String {
    let quotas = |s: &str| -> (String, String) {
        let (name, list) = s.split_once(": ").unwrap();
        let resources: Vec<String> =
            list.split(',').map(|kv| kv.split_once('=').unwrap()).map(|(k, v)| format!("{{name: {k}, nominalQuota: '{v}'}}")).collect();
        (name.to_string(), resources.join(", "))
    };
    let flavors: Vec<String> = flavors.iter().map(|f| quotas(f)).map(|(n, r)| format!("{{name: {n}, resources: [{r}]}}")).collect();
    let reservation: Vec<String> = reserved
        .iter()
        .map(|f| {
            let (name, list) = f.split_once(": ").unwrap();
            let resources: Vec<String> =
                list.split(',').map(|kv| kv.split_once('=').unwrap()).map(|(k, v)| format!("{{name: {k}, total: '{v}', borrowed: '0'}}")).collect();
            format!("{{name: {name}, resources: [{}]}}", resources.join(", "))
        })
        .collect();
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns, labels: {{team: ml}}}}\n---\n{FLAVORS}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec: {{resourceGroups: [{{coveredResources: [{covered}], flavors: [{}]}}]{}}}\nstatus: {{flavorsReservation: [{}]}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: ns}}\nspec: {{clusterQueue: cq}}\n",
        flavors.join(", "),
        more(spec),
        reservation.join(", ")
    )
}

/// A Job in LocalQueue `queue` whose pods are `template`; `spec` adds Job fields.
fn job(name: &str, queue: &str, spec: &str, template: &PodSpec) -> String {
    workload("Job", name, spec, &template.clone().with("restartPolicy: Never"))
        .replace(&format!("metadata: {{name: {name}}}"), &format!("metadata: {{name: {name}, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}"))
}

fn said(d: &kubectl_quota_engine::check::DocumentReport) -> String {
    match d.kueue.as_ref().map(|k| &k.decision) {
        None => "-".into(),
        Some(Decision::Admitted) => format!("admitted {:?}", d.kueue.as_ref().unwrap().flavors),
        Some(Decision::Pending(m)) => format!("pending: {m}"),
        Some(Decision::Inadmissible(m)) => format!("inadmissible: {m}"),
        Some(Decision::Undecided(m)) => format!("undecided: {m}"),
    }
}

const SELECTS_ALL: &str = "namespaceSelector: {}";

/// ClusterQueue cq (4 cpu, all reserved) in cohort org with lender (6 cpu, 2 reserved,
/// lending at most 3): 3 cpu free in the cohort, 7 at most.
fn cohort_state() -> String {
    kueue_state("cpu", &["default: cpu=4"], &["default: cpu=4"], "namespaceSelector: {}, cohortName: org")
        + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: lender}\nspec: {cohortName: org, namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu], flavors: [{name: default, resources: [{name: cpu, nominalQuota: '6', lendingLimit: '3'}]}]}]}\nstatus: {flavorsReservation: [{name: default, resources: [{name: cpu, total: '2'}]}]}\n"
}

#[test]
fn kueue_answers_a_job_in_its_words() {
    let cpu = |c: &str| pod("p").app("main", &format!("requests: {{cpu: '{c}'}}"));
    let full = kueue_state("cpu", &["default: cpu=10"], &["default: cpu=9"], SELECTS_ALL);
    let spot_first = kueue_state("cpu", &["spot: cpu=10", "default: cpu=10"], &["default: cpu=9"], SELECTS_ALL);
    let tolerates = cpu("2").with("tolerations: [{key: instance, operator: Equal, value: spot, effect: NoSchedule}]");
    let cohort = cohort_state();
    let rows: Vec<(&str, String, String, String)> = vec![
        // Seen on a real Kueue v0.17.0: 9 of 10 cpu reserved.
        ("a Job of 2 cpu waits for the 1 cpu it lacks", full.clone(), job("a", "q", "", &cpu("2")), "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into()),
        ("a Job of 1 cpu is admitted", full.clone(), job("a", "q", "", &cpu("1")), "admitted {\"cpu\": \"default\"}".into()),
        (
            "more than the flavor ever holds: never fits",
            full.clone(),
            job("a", "q", "", &cpu("12")),
            "pending: couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (12) > maximum capacity (10)".into(),
        ),
        ("the pods of the pod set add up: 4 of 500m", full.clone(), job("a", "q", "parallelism: 4", &cpu("500m")), "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into()),
        ("completions below parallelism: that many pods", full.clone(), job("a", "q", "parallelism: 4, completions: 2", &cpu("500m")), "admitted {\"cpu\": \"default\"}".into()),
        ("a LocalQueue that does not exist", full.clone(), job("a", "other", "", &cpu("1")), "inadmissible: LocalQueue other doesn't exist".into()),
        ("a ClusterQueue that does not exist", full.replace("clusterQueue: cq", "clusterQueue: gone"), job("a", "q", "", &cpu("1")), "inadmissible: ClusterQueue gone doesn't exist".into()),
        ("a stopped ClusterQueue", kueue_state("cpu", &["default: cpu=10"], &[], "namespaceSelector: {}, stopPolicy: Hold"), job("a", "q", "", &cpu("1")), "inadmissible: ClusterQueue cq is inactive".into()),
        ("no namespaceSelector selects no namespace", kueue_state("cpu", &["default: cpu=10"], &[], ""), job("a", "q", "", &cpu("1")), "pending: Workload namespace doesn't match ClusterQueue selector".into()),
        ("a selector the namespace's labels match", kueue_state("cpu", &["default: cpu=10"], &[], "namespaceSelector: {matchLabels: {team: ml}}"), job("a", "q", "", &cpu("1")), "admitted {\"cpu\": \"default\"}".into()),
        ("a selector they do not", kueue_state("cpu", &["default: cpu=10"], &[], "namespaceSelector: {matchExpressions: [{key: team, operator: In, values: [web]}]}"), job("a", "q", "", &cpu("1")), "pending: Workload namespace doesn't match ClusterQueue selector".into()),
        ("a resource no group covers", full.clone(), job("a", "q", "", &pod("p").app("main", "requests: {cpu: '1', memory: 1Gi}")), "pending: couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue".into()),
        (
            "a tainted flavor the pods do not tolerate is passed over, with why",
            spot_first.clone(),
            job("a", "q", "", &cpu("2")),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed, untolerated taint {instance spot NoSchedule <nil>} in flavor spot".into(),
        ),
        ("pods that tolerate it get the tainted flavor first", spot_first, job("a", "q", "", &tolerates), "admitted {\"cpu\": \"spot\"}".into()),
        (
            "a nodeSelector the flavor's labels do not match",
            kueue_state("cpu", &["on-demand: cpu=10", "default: cpu=10"], &["default: cpu=10"], SELECTS_ALL),
            job("a", "q", "", &cpu("1").with("nodeSelector: {instance: spot}")),
            // The group's flavors label `instance`: a flavor without it matches no such selector.
            "pending: couldn't assign flavors to pod set main: flavor default doesn't match node affinity, flavor on-demand doesn't match node affinity".into(),
        ),
        (
            "two flavors short, both said (Kueue's own example)",
            kueue_state("cpu", &["on-demand: cpu=50", "default: cpu=10"], &["on-demand: cpu=50", "default: cpu=9500m"], SELECTS_ALL),
            job("a", "q", "", &cpu("1500m")),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed, insufficient unused quota for cpu in flavor on-demand, 1500m more needed".into(),
        ),
        (
            "limits stand for missing requests, memory as Kueue prints it",
            kueue_state("cpu, memory", &["default: cpu=10,memory=4Gi"], &["default: cpu=0,memory=3Gi"], SELECTS_ALL),
            job("a", "q", "parallelism: 2", &pod("p").app("main", "limits: {cpu: '1', memory: 1Gi}")),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for memory in flavor default, 1Gi more needed".into(),
        ),
        (
            "a ClusterQueue covering pods counts the pods",
            kueue_state("cpu, pods", &["default: cpu=10,pods=3"], &["default: cpu=0,pods=2"], SELECTS_ALL),
            job("a", "q", "parallelism: 2", &cpu("1")),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default, 1 more needed".into(),
        ),
        // A cohort, as a real Kueue v0.17.0 answered it (tests/live_kueue.rs): cq uses all its
        // 4 cpu; lender (6, 2 used) lends at most 3, so 3 are free and 7 at most.
        ("in a cohort: admitted by borrowing what another lends", cohort.clone(), job("a", "q", "", &cpu("2")), "admitted {\"cpu\": \"default\"}".into()),
        ("in a cohort: short of what it lends", cohort.clone(), job("a", "q", "", &cpu("5")), "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed".into()),
        (
            "in a cohort: past what it could ever lend",
            cohort.clone(),
            job("a", "q", "", &cpu("8")),
            "pending: couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (8) > maximum capacity (7)".into(),
        ),
        (
            "a borrowing limit of 1: 1 free, 5 at most",
            cohort.replace("{name: cpu, nominalQuota: '4'}", "{name: cpu, nominalQuota: '4', borrowingLimit: '1'}"),
            job("a", "q", "", &cpu("2")),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into(),
        ),
        (
            "a hierarchical cohort: not replayed, said so",
            cohort.clone() + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\nspec: {parentName: root}\n",
            job("a", "q", "", &cpu("1")),
            "undecided: ClusterQueue cq is in cohort org, which has a parent, children or quota of its own (a Cohort object): hierarchical cohorts are not replayed, so whether it fits is not decided".into(),
        ),
        ("a Job without the label is not Kueue's", full, workload("Job", "a", "", &cpu("1").with("restartPolicy: Never")), "-".into()),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        t.row(what, said(&check_one(&state, &input)), want);
    }
    t.done();
}

#[test]
fn an_admitted_job_reserves_quota_for_the_jobs_after_it_and_a_held_one_charges_nothing() {
    let state = kueue_state("cpu", &["default: cpu=10"], &[], SELECTS_ALL) + "---\n" + &quota("compute", "", "requests.cpu=20/0");
    let big = pod("p").app("main", "requests: {cpu: '6'}");
    let input = docs(&[job("a", "q", "", &big), job("b", "q", "", &big), job("c", "q", "", &pod("p").app("main", "requests: {cpu: '4'}"))]);
    let reports = check_all(&state, &input);
    let got: Vec<String> = reports.iter().map(said).collect();
    assert_eq!(
        got,
        [
            "admitted {\"cpu\": \"default\"}".to_string(),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed".into(),
            "admitted {\"cpu\": \"default\"}".into(),
        ]
    );
    // ResourceQuota charged the admitted Jobs' pods only: 6 + 4 of 20.
    let used = |d: &kubectl_quota_engine::check::DocumentReport| d.pods.as_ref().unwrap().quotas[0].resources[0].after.to_string();
    assert_eq!(used(&reports[2]), "10");
}

#[test]
fn a_job_for_kueue_where_no_kueue_object_was_read_says_so() {
    let d = check_one(&quota("compute", "", "requests.cpu=20/0"), &job("a", "q", "", &pod("p").app("main", "requests: {cpu: '1'}")));
    assert!(d.kueue.is_none());
    assert!(d.notes.iter().any(|n| n.contains("no Kueue object was read")), "{:?}", d.notes);
}

#[test]
fn an_admitted_job_reserves_its_pods_where_the_cluster_queue_covers_pods() {
    let state = kueue_state("cpu, pods", &["default: cpu=10,pods=3"], &[], SELECTS_ALL);
    let two = pod("p").app("main", "requests: {cpu: '1'}");
    let input = docs(&[job("a", "q", "parallelism: 2", &two), job("b", "q", "parallelism: 2", &two)]);
    let got: Vec<String> = check_all(&state, &input).iter().map(said).collect();
    assert_eq!(
        got,
        [
            "admitted {\"cpu\": \"default\", \"pods\": \"default\"}".to_string(),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default, 1 more needed".into()
        ]
    );
}

/// The guard's warnings for Jobs in Kueue's queues: what quota does with its pods once it runs,
/// then Kueue's answer where it holds the Job; an admitted Job whose pods quota refuses says
/// both; one that Kueue admits and quota takes says nothing.
#[test]
fn the_guards_warnings_say_what_kueue_and_then_quota_do() {
    use kubectl_quota_engine::report::warnings::for_document;
    let state = kueue_state("cpu", &["default: cpu=10"], &["default: cpu=9"], SELECTS_ALL) + "---\n" + &quota("compute", "", "requests.cpu=9500m/9");
    let input = docs(&[
        job("wait", "q", "", &pod("p").app("main", "requests: {cpu: '2'}")),
        job("run", "q", "", &pod("p").app("main", "requests: {cpu: 500m}")),
        job("refused", "q", "", &pod("p").app("main", "requests: {cpu: 500m}")),
        job("lost", "none", "", &pod("p").app("main", "requests: {cpu: 100m}")),
    ]);
    let reports = check_all(&state, &input);
    let warned: Vec<Vec<String>> = reports.iter().map(for_document).collect();
    let pods_refused = |what: &str, cpu: &str, used: &str| {
        format!("quota compute will refuse the pod of job/{what}: exceeded quota: compute, requested: requests.cpu={cpu}, used: requests.cpu={used}, limited: requests.cpu=9500m")
    };
    assert_eq!(
        warned,
        [
            vec![
                // A held Job charges nothing: the quota as it stands, 9 used.
                format!("once Kueue admits it, {}", pods_refused("wait", "2", "9")),
                "Kueue will keep job/wait suspended for now (LocalQueue q, ClusterQueue cq): couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".to_string(),
            ],
            vec![],
            vec![format!("Kueue admits it now, but {}", pods_refused("refused", "500m", "9500m"))],
            vec![
                format!("once Kueue admits it, {}", pods_refused("lost", "100m", "9500m")),
                "Kueue cannot admit job/lost (LocalQueue none): LocalQueue none doesn't exist; it stays suspended".to_string(),
            ],
        ],
        "{reports:#?}"
    );
}

/// Kueue's kinds answer together: where one of them could not be read (a LocalQueue the user
/// may not list is not one that does not exist), the Job's ClusterQueue is not replayed, and
/// its report says so, as where none was read.
#[test]
fn kueue_not_read_in_full_is_not_replayed() {
    use kubectl_quota_engine::check::{self, cluster_kinds, CheckOptions, ClusterState};
    let state = kueue_state("cpu", &["default: cpu=10"], &[], SELECTS_ALL) + "---\n" + &quota("compute", "", "requests.cpu=20/0");
    let mut cluster = ClusterState::from_objects(decode("state.yaml", &state), NS);
    cluster.not_read(cluster_kinds::row(kubectl_quota_engine::kueue::GROUP, "LocalQueue").unwrap());
    let input = decode("input.yaml", &job("a", "q", "", &pod("p").app("main", "requests: {cpu: '1'}")));
    let d = check::check(&mut cluster, input, &CheckOptions { namespace: NS.into(), ..CheckOptions::default() }).documents.remove(0);
    assert!(d.kueue.is_none(), "{:?}", d.kueue);
    assert!(d.notes.iter().any(|n| n.contains("no Kueue object was read")), "{:?}", d.notes);
}

/// What a Job admitted by borrowing takes from its cohort, the Jobs after it in the input no
/// longer find: 2 of the 3 free cpu borrowed, the next Job of 2 waits for 1.
#[test]
fn a_job_admitted_by_borrowing_leaves_the_cohort_less_for_the_next() {
    let cpu = |c: &str| pod("p").app("main", &format!("requests: {{cpu: '{c}'}}"));
    let input = docs(&[job("a", "q", "", &cpu("2")), job("b", "q", "", &cpu("2")), job("c", "q", "", &cpu("1"))]);
    let got: Vec<String> = check_all(&cohort_state(), &input).iter().map(said).collect();
    assert_eq!(
        got,
        [
            "admitted {\"cpu\": \"default\"}".to_string(),
            "pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into(),
            "admitted {\"cpu\": \"default\"}".into(),
        ]
    );
}
