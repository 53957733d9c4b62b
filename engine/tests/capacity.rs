//! The cluster views: what the quotas promise against the nodes, namespaces no quota caps,
//! workloads a quota blocks. Each table row is a small cluster as YAML and what a view says.

use kubectl_quota_engine::capacity::{parse_refusal, ratio_percent, CapacityReport, Collector, Options, ResourceRow};
use kubectl_quota_engine::manifest::parse_str;
use kubectl_quota_engine::quantity::Quantity;

fn collect(yaml: &str) -> Collector {
    let mut c = Collector::default();
    for d in parse_str("state.yaml", yaml).unwrap() {
        c.add(&d).unwrap();
    }
    c
}

fn node(name: &str, spec: &str, alloc: &str, ready: &str) -> String {
    format!("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nspec: {spec}\nstatus:\n  allocatable: {alloc}\n  conditions: [{{type: Ready, status: '{ready}'}}]\n---\n")
}

fn quota(ns: &str, name: &str, hard: &str, used: &str, extra: &str) -> String {
    format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  hard: {hard}\n{extra}status:\n  hard: {hard}\n  used: {used}\n---\n")
}

fn pod(ns: &str, name: &str, requests: &str, phase: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  containers: [{{name: c, image: x, resources: {{requests: {requests}}}}}]\nstatus: {{phase: {phase}}}\n---\n")
}

fn namespaces(names: &[&str]) -> String {
    names.iter().map(|n| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {n}}}\n---\n")).collect()
}

fn row<'a>(r: &'a CapacityReport, resource: &str) -> &'a ResourceRow {
    r.resources
        .iter()
        .find(|x| x.resource == resource)
        .unwrap_or_else(|| panic!("no row {resource} in {:?}", r.resources.iter().map(|x| &x.resource).collect::<Vec<_>>()))
}

fn s(q: &Option<Quantity>) -> String {
    q.as_ref().map_or("none".into(), Quantity::to_string)
}

#[test]
fn allocatable_sums_schedulable_nodes_and_names_the_others() {
    let cases = [
        // (nodes, allocatable cpu, left out)
        (node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{}", "{cpu: 2500m}", "True"), "6500m", vec![]),
        (node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{unschedulable: true}", "{cpu: '4'}", "True"), "4", vec!["b: unschedulable (cordoned)"]),
        (
            node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{taints: [{key: gpu, value: only, effect: NoSchedule}]}", "{cpu: '4'}", "True"),
            "4",
            vec!["b: taint gpu=only:NoSchedule"],
        ),
        (node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{taints: [{key: x, effect: PreferNoSchedule}]}", "{cpu: '4'}", "True"), "8", vec![]),
        (
            node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{taints: [{key: x, effect: NoExecute}]}", "{cpu: '4'}", "True"),
            "4",
            vec!["b: taint x:NoExecute"],
        ),
        (node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{}", "{cpu: '4'}", "Unknown"), "4", vec!["b: not Ready (Unknown)"]),
        (node("a", "{}", "{cpu: '4'}", "True") + &node("b", "{}", "{cpu: '4'}", "False"), "4", vec!["b: not Ready (False)"]),
    ];
    for (yaml, want, left) in cases {
        let r = collect(&(yaml + &quota("t", "q", "{requests.cpu: '1'}", "{requests.cpu: '0'}", ""))).capacity(&Options::default());
        assert_eq!(s(&row(&r, "requests.cpu").allocatable), want, "{left:?}");
        let got: Vec<String> = r.nodes_left_out.iter().map(|l| format!("{}: {}", l.name, l.reasons.join(", "))).collect();
        assert_eq!(got, left);
        assert_eq!(r.nodes_counted + r.nodes_left_out.len(), r.nodes);
    }
}

#[test]
fn the_promise_is_the_smallest_unscoped_hard_of_each_namespace() {
    let scoped = "  scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}\n";
    let base = node("a", "{}", "{cpu: '10', memory: 10Gi, pods: '100'}", "True") + &namespaces(&["one", "two", "three"]);
    let cases: Vec<(&str, String, &str, Vec<&str>, &str)> = vec![
        // (what, quotas, promised cpu, unbounded, scoped cpu)
        ("one quota each", quota("one", "q", "{requests.cpu: '4'}", "{}", "") + &quota("two", "q", "{requests.cpu: '3'}", "{}", ""), "7", vec!["three"], "0"),
        (
            "two quotas in a namespace: the smaller",
            quota("one", "a", "{requests.cpu: '4'}", "{}", "") + &quota("one", "b", "{requests.cpu: '2'}", "{}", ""),
            "2",
            vec!["three", "two"],
            "0",
        ),
        ("cpu and requests.cpu are one limit", quota("one", "a", "{cpu: '5', requests.cpu: '3'}", "{}", ""), "3", vec!["three", "two"], "0"),
        (
            "a scoped quota is apart",
            quota("one", "a", "{requests.cpu: '4'}", "{}", "") + &quota("one", "hi", "{requests.cpu: '8'}", "{}", scoped),
            "4",
            vec!["three", "two"],
            "8",
        ),
        // No namespace caps it: the promise is unbounded, not 0.
        ("only a scoped quota: unbounded", quota("one", "hi", "{requests.cpu: '8'}", "{}", scoped), "unbounded", vec!["one", "three", "two"], "8"),
        (
            "a Terminating scope is a scope",
            quota("one", "t", "{requests.cpu: '8'}", "{}", "  scopes: [Terminating]\n"),
            "unbounded",
            vec!["one", "three", "two"],
            "8",
        ),
    ];
    for (what, quotas, promised, unbounded, scoped_sum) in cases {
        let r = collect(&(base.clone() + &quotas)).capacity(&Options::default());
        let cpu = row(&r, "requests.cpu");
        assert_eq!(cpu.promised.as_ref().map_or("unbounded".into(), ToString::to_string), promised, "{what}");
        assert_eq!(cpu.unbounded, unbounded, "{what}");
        assert_eq!(cpu.scoped_hard.to_string(), scoped_sum, "{what}");
    }
}

#[test]
fn used_is_the_quotas_and_the_pods_where_no_quota_caps() {
    let yaml = node("a", "{}", "{cpu: '10'}", "True")
        + &namespaces(&["capped", "open", "kube-system"])
        + &quota("capped", "q", "{requests.cpu: '4'}", "{requests.cpu: 1500m}", "")
        + &pod("capped", "p", "{cpu: '9'}", "Running")
        + &pod("open", "p1", "{cpu: 250m}", "Running")
        + &pod("open", "p2", "{cpu: '1'}", "Pending")
        + &pod("open", "done", "{cpu: '5'}", "Succeeded")
        + &pod("kube-system", "dns", "{cpu: 100m}", "Running");
    let r = collect(&yaml).capacity(&Options::default());
    let cpu = row(&r, "requests.cpu");
    // 1500m from the quota (not the pod's 9), 1250m of running and pending pods, 100m of the
    // excluded namespace (its pods still use the nodes).
    assert_eq!(cpu.used.to_string(), "2850m");
    assert_eq!(cpu.promised.as_ref().map(ToString::to_string).as_deref(), Some("4"));
    assert_eq!(cpu.unbounded, vec!["open"]);
    assert_eq!(r.namespaces_excluded, vec!["kube-system"]);
    let all = collect(&yaml).capacity(&Options { excluded: Default::default(), ..Options::default() });
    assert_eq!(row(&all, "requests.cpu").unbounded, vec!["kube-system", "open"]);
}

#[test]
fn overcommitted_resources_come_first_and_offered_nowhere_last() {
    let yaml = node("a", "{}", "{cpu: '4', memory: 8Gi, pods: '10'}", "True")
        + &namespaces(&["t"])
        + &quota("t", "q", "{requests.cpu: '2', requests.memory: 16Gi, requests.nvidia.com/gpu: '2', pods: '5'}", "{}", "");
    let r = collect(&yaml).capacity(&Options::default());
    let order: Vec<(&str, Option<u64>)> = r.resources.iter().map(|x| (x.resource.as_str(), x.promised_percent)).collect();
    assert_eq!(order, vec![("requests.memory", Some(200)), ("pods", Some(50)), ("requests.cpu", Some(50)), ("requests.nvidia.com/gpu", None)]);
    assert!(r.resources.last().unwrap().offered_nowhere());
}

#[test]
fn by_namespace_puts_the_largest_share_first() {
    let yaml = node("a", "{}", "{cpu: '10'}", "True")
        + &namespaces(&["small", "big", "open"])
        + &quota("small", "q", "{requests.cpu: '1'}", "{requests.cpu: '1'}", "")
        + &quota("big", "q", "{requests.cpu: '6'}", "{requests.cpu: '2'}", "");
    let r = collect(&yaml).capacity(&Options { by_namespace: true, resource: Some("cpu".into()), ..Options::default() });
    assert_eq!(r.resources.len(), 1);
    let shares: Vec<(String, String, Option<u64>)> = r.resources[0].namespaces.iter().map(|x| (x.namespace.clone(), s(&x.cap), x.percent)).collect();
    assert_eq!(shares, vec![("big".into(), "6".into(), Some(60)), ("small".into(), "1".into(), Some(10)), ("open".into(), "none".into(), None)]);
}

#[test]
fn device_classes_count_the_devices_their_driver_publishes() {
    let yaml = node("a", "{}", "{cpu: '1'}", "True")
        + "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n  selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]\n---\n"
        + "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: fancy}\nspec:\n  selectors: [{cel: {expression: 'device.attributes[\"x\"].y > 2'}}]\n---\n"
        + "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s1}\nspec: {driver: gpu.example.com, nodeName: a, pool: {name: a, generation: 2, resourceSliceCount: 1}, devices: [{name: g0}, {name: g1}]}\n---\n"
        + "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: old}\nspec: {driver: gpu.example.com, nodeName: a, pool: {name: a, generation: 1, resourceSliceCount: 1}, devices: [{name: g0}]}\n---\n"
        + "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: gone}\nspec: {driver: gpu.example.com, nodeName: cordoned, pool: {name: c, generation: 1, resourceSliceCount: 1}, devices: [{name: g0}]}\n---\n"
        + &node("cordoned", "{unschedulable: true}", "{cpu: '1'}", "True")
        + &namespaces(&["t"])
        + &quota("t", "q", "{gpu.deviceclass.resource.k8s.io/devices: '3', fancy.deviceclass.resource.k8s.io/devices: '1'}", "{}", "");
    let r = collect(&yaml).capacity(&Options::default());
    let gpu = row(&r, "gpu.deviceclass.resource.k8s.io/devices");
    assert_eq!(s(&gpu.allocatable), "2", "the newest generation of the pool, no cordoned node's devices");
    assert_eq!(gpu.promised_percent, Some(150));
    assert_eq!(s(&row(&r, "fancy.deviceclass.resource.k8s.io/devices").allocatable), "none");
    assert!(r.notes.iter().any(|n| n.contains("device class fancy")), "{:?}", r.notes);
}

#[test]
fn a_slice_of_more_devices_than_the_server_stores_is_an_error_naming_its_field() {
    let slice = |n: usize| {
        let devices: Vec<String> = (0..n).map(|i| format!("{{name: g{i}}}")).collect();
        format!("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: s}}\nspec: {{driver: gpu.example.com, nodeName: a, pool: {{name: a, generation: 1, resourceSliceCount: 1}}, devices: [{}]}}\n", devices.join(", "))
    };
    for (n, refused) in [(128, false), (129, true), (10_000, true)] {
        let mut c = Collector::default();
        let docs = parse_str("state.yaml", &slice(n)).unwrap();
        let r = c.add(&docs[0]);
        assert_eq!(r.is_err(), refused, "{n} devices: {r:?}");
        if let Err(e) = r {
            let said = e.to_string();
            assert!(
                said.contains("state.yaml") && said.contains("spec.devices") && said.contains(&format!("Too many: {n}: must have at most 128 items")),
                "{said}"
            );
        }
    }
}

#[test]
fn uncovered_names_namespaces_without_quota_or_without_a_cap() {
    let scoped = "  scopes: [BestEffort]\n";
    let yaml = namespaces(&["none", "cpu-only", "gpu", "scoped-gpu", "kube-system"])
        + &quota("cpu-only", "q", "{requests.cpu: '1'}", "{}", "")
        + &quota("gpu", "q", "{requests.nvidia.com/gpu: '1'}", "{}", "")
        + &quota("scoped-gpu", "q", "{requests.nvidia.com/gpu: '1'}", "{}", scoped)
        + &pod("none", "p", "{nvidia.com/gpu: '2'}", "Running");
    let c = collect(&yaml);
    let any = c.uncovered(&Options::default());
    assert_eq!(any.uncovered.iter().map(|u| u.namespace.as_str()).collect::<Vec<_>>(), vec!["none"]);
    assert_eq!(any.excluded, vec!["kube-system"]);
    let gpu = c.uncovered(&Options { resource: Some("nvidia.com/gpu".into()), ..Options::default() });
    let got: Vec<(&str, &str, String)> = gpu.uncovered.iter().map(|u| (u.namespace.as_str(), u.reason.as_str(), s(&u.used))).collect();
    assert_eq!(
        got,
        vec![
            ("cpu-only", "1 quota(s), none on requests.nvidia.com/gpu", "0".to_string()),
            ("none", "no quota", "2".to_string()),
            ("scoped-gpu", "only scoped quotas cap it (q for BestEffort)", "0".to_string()),
        ]
    );
}

fn rs(ns: &str, name: &str, owner: &str, replicas: i64, current: i64) -> String {
    format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {name}\n  namespace: {ns}\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: {owner}, controller: true}}]\nspec: {{replicas: {replicas}, selector: {{matchLabels: {{a: b}}}}, template: {{metadata: {{labels: {{a: b}}}}, spec: {{containers: [{{name: c, image: x}}]}}}}}}\nstatus: {{replicas: {current}}}\n---\n"
    )
}

fn event(ns: &str, kind: &str, name: &str, message: &str, last: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Event\nmetadata: {{name: {name}.x, namespace: {ns}}}\ninvolvedObject: {{kind: {kind}, name: {name}, namespace: {ns}}}\nreason: FailedCreate\ncount: 3\nlastTimestamp: '{last}'\nmessage: '{message}'\n---\n"
    )
}

#[test]
fn blocked_lists_workloads_still_missing_pods_with_the_fix() {
    let exceeded = "pods \"web-1\" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2";
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "a refused ReplicaSet of a Deployment, the quota as it stands",
            quota("t", "compute", "{requests.cpu: '2'}", "{requests.cpu: 1900m}", "") + &rs("t", "web-1", "web", 3, 1) + &event("t", "ReplicaSet", "web-1", exceeded, "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 2 quota compute requests.cpu: raise quota compute's requests.cpu by 400m (to 2400m) to admit the next pod, or by 900m (to 2900m) for all 2 waiting"],
        ),
        (
            "all pods exist again: not blocked",
            quota("t", "compute", "{requests.cpu: '2'}", "{requests.cpu: 1900m}", "") + &rs("t", "web-1", "web", 3, 3) + &event("t", "ReplicaSet", "web-1", exceeded, "2026-01-01T00:00:00Z"),
            vec![],
        ),
        (
            "usage went down since: the next retry will do",
            quota("t", "compute", "{requests.cpu: '2'}", "{requests.cpu: '1'}", "") + &rs("t", "web-1", "web", 3, 1) + &event("t", "ReplicaSet", "web-1", exceeded, "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 2 quota compute requests.cpu: quota compute's requests.cpu fits the next pod now: the controller creates it at its next retry"],
        ),
        (
            "a missing ServiceAccount: listed, with what to create",
            rs("t", "web-1", "web", 3, 1) + &event("t", "ReplicaSet", "web-1", "pods \"web-1\" is forbidden: error looking up service account t/x: serviceaccount \"x\" not found", "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 2 ServiceAccount - : create ServiceAccount x in namespace t, or set serviceAccountName to one that exists"],
        ),
        (
            "a LimitRange maximum: the bound and the value to stay within",
            rs("t", "web-1", "web", 2, 0) + &event("t", "ReplicaSet", "web-1", "pods \"web-1\" is forbidden: maximum cpu usage per Container is 1, but limit is 2", "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 2 LimitRange - : lower limits.cpu to 1 or less in each container, or raise the LimitRange's max cpu per Container to 2"],
        ),
        (
            "PodSecurity: one short fix per failed check, then the namespace's level",
            rs("t", "web-1", "web", 1, 0) + &event("t", "ReplicaSet", "web-1", "pods \"web-1\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"app\" must not set securityContext.privileged=true)", "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 1 PodSecurity - : PodSecurity baseline:latest: container \"app\" must not set securityContext.privileged=true; or lower the namespace's pod-security.kubernetes.io/enforce level (it is baseline)"],
        ),
        (
            "an error that says nothing to fix: listed, and why is offered",
            rs("t", "web-1", "web", 1, 0) + &event("t", "ReplicaSet", "web-1", "Timeout: request did not complete within requested timeout", "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 1 other - : see `kubectl quota why deployment/web -n t`"],
        ),
        (
            "must specify",
            rs("t", "web-1", "web", 1, 0) + &event("t", "ReplicaSet", "web-1", "pods \"web-1\" is forbidden: failed quota: compute: must specify requests.cpu", "2026-01-01T00:00:00Z"),
            vec!["t deployment/web 1 quota compute requests.cpu: add resources.requests.cpu to the pod template's containers, or a LimitRange defaultRequest for cpu: quota compute requires it"],
        ),
        (
            "must specify four: one fix, grouped by requests and limits",
            rs("t", "web-1", "web", 1, 0)
                + &event(
                    "t",
                    "ReplicaSet",
                    "web-1",
                    "pods \"web-1\" is forbidden: failed quota: compute: must specify limits.cpu,limits.memory,requests.cpu,requests.memory",
                    "2026-01-01T00:00:00Z",
                ),
            vec!["t deployment/web 1 quota compute limits.cpu,limits.memory,requests.cpu,requests.memory: set requests for cpu and memory, limits for cpu and memory in the pod template's containers, or LimitRange defaults for them: quota compute requires them"],
        ),
        (
            "a Job without its controller read: waiting unknown, the message's numbers",
            event("t", "Job", "batch-1", exceeded, "2026-01-01T00:00:00Z"),
            vec!["t job/batch-1 ? quota compute requests.cpu: raise quota compute's requests.cpu by 300m (to 2300m) to admit the next pod"],
        ),
    ];
    for (what, yaml, want) in cases {
        let r = collect(&yaml).blocked(&Options::default());
        let got: Vec<String> = r
            .blocked
            .iter()
            .map(|b| {
                format!(
                    "{} {} {} {} {} {}: {}",
                    b.namespace,
                    b.workload,
                    b.waiting.map_or("?".into(), |w| w.to_string()),
                    b.blocker.name(),
                    b.quota.as_deref().unwrap_or("-"),
                    b.resources.join(","),
                    b.fix
                )
            })
            .collect();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn the_newest_event_of_a_controller_is_the_one_read() {
    let old = "exceeded quota: old, requested: pods=1, used: pods=1, limited: pods=1";
    let new = "exceeded quota: new, requested: pods=1, used: pods=2, limited: pods=2";
    for order in [[old, new], [new, old]] {
        let times = |m: &str| if m == new { "2026-01-01T00:10:00Z" } else { "2026-01-01T00:00:00Z" };
        let yaml = event("t", "ReplicaSet", "w", order[0], times(order[0])) + &event("t", "ReplicaSet", "w", order[1], times(order[1]));
        let r = collect(&yaml).blocked(&Options::default());
        assert_eq!(r.blocked[0].quota.as_deref(), Some("new"));
    }
}

#[test]
fn refusal_messages_are_read_as_the_server_writes_them() {
    let cases = [
        (
            "exceeded quota: q, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=3500m,requests.cpu=1, limited: limits.cpu=4,requests.cpu=4",
            Some("q"),
            vec!["limits.cpu"],
            vec![],
        ),
        ("failed quota: q: must specify limits.cpu,requests.memory", Some("q"), vec![], vec!["limits.cpu", "requests.memory"]),
        ("failed quota: q: must specify limits.cpu for: a,b; requests.cpu for: a", Some("q"), vec![], vec!["limits.cpu", "requests.cpu"]),
        // Numbers that do not say which: the server named them, so all of them.
        ("exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=2", Some("q"), vec!["pods"], vec![]),
        ("insufficient quota to match these scopes: [{PriorityClass In [high]}]", None, vec![], vec![]),
    ];
    for (m, quota, exceeded, must) in cases {
        let r = parse_refusal(m);
        assert_eq!(r.quota.as_deref(), quota, "{m}");
        assert_eq!(r.exceeded.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), exceeded, "{m}");
        assert_eq!(r.must_specify, must, "{m}");
    }
}

#[test]
fn percentages_stay_exact_beyond_milli_units() {
    let q = |s: &str| Quantity::parse(s).unwrap();
    let cases =
        [("3", "4", Some(75)), ("0", "4", Some(0)), ("1", "0", Some(u64::MAX)), ("0", "0", None), ("6Ei", "3Ei", Some(200)), ("1536Pi", "1Ei", Some(150))];
    for (a, b, want) in cases {
        assert_eq!(ratio_percent(&q(a), &q(b)), want, "{a}/{b}");
    }
}

#[test]
fn nodes_written_alike_are_read_once_and_summed_as_each_alone() {
    // The same allocatable in several spellings, nodes left out between them, a node read
    // again with another, and an invalid one after valid ones written the same but for a sign.
    let mut yaml = String::new();
    for i in 0..20 {
        let (spec, alloc) = match i % 5 {
            0 => ("{}", "{cpu: '4', memory: 8Gi}"),
            1 => ("{}", "{cpu: 4000m, memory: 8Gi}"),
            2 => ("{unschedulable: true}", "{cpu: '4', memory: 8Gi}"),
            3 => ("{}", "{cpu: 4, memory: 8Gi}"),
            _ => ("{}", "{cpu: '4', memory: 8Gi, nvidia.com/gpu: '1'}"),
        };
        yaml += &node(&format!("n{i}"), spec, alloc, "True");
    }
    yaml += &node("n0", "{}", "{cpu: '1', memory: 8Gi}", "True");
    let r = collect(&(yaml.clone() + &quota("t", "q", "{requests.cpu: '1'}", "{requests.cpu: '0'}", ""))).capacity(&Options::default());
    // 16 nodes counted of 20: n0 now 1 cpu, three more written `'4'`, four `4000m`, four `4`, four with a GPU.
    assert_eq!((r.nodes, r.nodes_counted, r.nodes_left_out.len()), (20, 16, 4));
    assert_eq!(s(&row(&r, "requests.cpu").allocatable), "61");
    assert_eq!(s(&row(&r, "requests.memory").allocatable), "128Gi");
    assert_eq!(s(&row(&r, "requests.nvidia.com/gpu").allocatable), "4");
    let mut c = collect(&yaml);
    let bad = parse_str("nodes.yaml", &node("m", "{}", "{cpu: '-4', memory: 8Gi}", "True")).unwrap();
    let e = c.add(&bad[0]).unwrap_err().to_string();
    assert!(e.contains("status.allocatable.cpu"), "{e}");
}

#[test]
fn malformed_objects_the_views_read_are_errors_naming_the_field() {
    let mut c = Collector::default();
    let d = parse_str("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: lots}}\n").unwrap();
    let e = c.add(&d[0]).unwrap_err().to_string();
    assert!(e.contains("nodes.yaml") && e.contains("status.allocatable.cpu"), "{e}");
}

#[test]
fn a_resource_is_named_as_quotas_and_nodes_name_it() {
    let rows = |n: &str| kubectl_quota_engine::capacity::rows_named(n);
    let owned = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    // A bare name keeps both of its rows; a spelled-out one, that row.
    assert_eq!(rows("cpu"), owned(&["requests.cpu", "limits.cpu"]));
    assert_eq!(rows("memory"), owned(&["requests.memory", "limits.memory"]));
    assert_eq!(rows("requests.cpu"), owned(&["requests.cpu"]));
    assert_eq!(rows("limits.memory"), owned(&["limits.memory"]));
    assert_eq!(rows("pods"), owned(&["pods"]));
    assert_eq!(rows("nvidia.com/gpu"), owned(&["requests.nvidia.com/gpu"]));
    assert_eq!(rows("hugepages-2Mi"), owned(&["requests.hugepages-2Mi"]));
    for unknown in ["cpus", "services", "count/pods", "limits.nvidia.com/gpu", ""] {
        assert_eq!(rows(unknown), None, "{unknown}");
    }
    // --resource cpu shows limits.cpu as well.
    let yaml = node("a", "{}", "{cpu: '4', memory: 8Gi}", "True") + &namespaces(&["t"]) + &quota("t", "q", "{requests.cpu: '2', limits.cpu: '3'}", "{}", "");
    let r = collect(&yaml).capacity(&Options { resource: Some("cpu".into()), ..Options::default() });
    let shown: Vec<&str> = r.resources.iter().map(|x| x.resource.as_str()).collect();
    assert_eq!(shown, ["limits.cpu", "requests.cpu"]);
    // memory: nodes offer it, no namespace caps it: unbounded, no percentage.
    let r = collect(&yaml).capacity(&Options::default());
    let memory = row(&r, "requests.memory");
    assert_eq!((&memory.promised, memory.promised_percent, &memory.unbounded), (&None, None, &vec!["t".to_string()]));
}

#[test]
fn blocked_names_the_vpa_whose_target_the_refused_pods_ask_for() {
    let exceeded = "pods \"web-1\" is forbidden: exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=1900m, limited: requests.cpu=2";
    let vpa = "apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata: {name: web, namespace: t}\nspec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}\nstatus: {recommendation: {containerRecommendations: [{containerName: c, target: {cpu: '1'}}]}}\n---\n";
    let yaml = quota("t", "compute", "{requests.cpu: '2'}", "{requests.cpu: 1900m}", "")
        + &rs("t", "web-1", "web", 3, 1)
        + &event("t", "ReplicaSet", "web-1", exceeded, "2026-01-01T00:00:00Z")
        + vpa;
    let r = collect(&yaml).blocked(&Options::default());
    let named: Vec<Option<&str>> = r.blocked.iter().map(|b| b.autoscaler.as_deref()).collect();
    assert_eq!(named, vec![Some("VPA web sets new pods to its target (c: cpu=1): at that size quota compute refuses the rest")]);
}

/// An HPA whose target does not exist is a normal state of a cluster (kubectl shows
/// `<unknown>`): a note, not a gap. Only a target that could not be read leaves the answer
/// incomplete.
#[test]
fn an_autoscaler_whose_target_does_not_exist_is_a_note_not_a_gap() {
    let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: burn, namespace: t}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burn}, minReplicas: 1, maxReplicas: 4}\n---\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: burn, namespace: t}\nspec:\n  replicas: 1\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\nstatus: {replicas: 1}\n---\n";
    let base = namespaces(&["t"]) + &node("n", "{}", "{cpu: '4'}", "True") + &quota("t", "compute", "{requests.cpu: '1'}", "{requests.cpu: 100m}", "");
    // (how the target stands, its document, whether a GET said 404, whether every Deployment
    // was read) -> (incomplete, the note's opening)
    let cases: [(&str, &str, bool, bool, bool, Option<&str>); 4] = [
        ("read", deployment, false, false, false, None),
        (
            "a GET said it does not exist",
            "",
            true,
            false,
            false,
            Some("autoscalers whose target does not exist, nothing to count for them: HPA burn in t (deployment/burn)"),
        ),
        (
            "every Deployment read, it is not among them",
            "",
            false,
            true,
            false,
            Some("autoscalers whose target does not exist, nothing to count for them: HPA burn in t (deployment/burn)"),
        ),
        (
            "not read",
            "",
            false,
            false,
            true,
            Some("autoscalers whose target was not read, not counted in what autoscalers may ask for: HPA burn in t (deployment/burn)"),
        ),
    ];
    for (how, target, absent, all_read, incomplete, note) in cases {
        let mut c = Collector::default();
        c.scale_targets = true;
        for d in parse_str("state.yaml", &(base.clone() + hpa + target)).unwrap() {
            c.add(&d).unwrap();
        }
        if absent {
            let t = kubectl_quota_engine::objects::ScaleTarget { api_version: "apps/v1".into(), kind: "Deployment".into(), name: "burn".into() };
            c.target_absent("t", &t);
        }
        if all_read {
            c.mark_read("Deployment");
        }
        assert_eq!(c.unread_scale_targets().is_empty(), !target.is_empty() || absent || all_read, "{how}");
        let r = c.capacity(&Options::default());
        assert_eq!(r.incomplete, incomplete, "{how}: {:?}", r.notes);
        assert_eq!(r.notes.iter().find(|n| n.starts_with("autoscalers")).map(String::as_str), note, "{how}: {:?}", r.notes);
        assert_eq!(r.autoscalers.len(), usize::from(!target.is_empty()), "{how}");
    }
}
