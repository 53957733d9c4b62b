//! Rule tables, step `usage`: What an object is charged: pod usage (§1.2, §1.3), "must specify" (§2.1), object counts (§4, §4.3), claims and services (§4.1, §4.2).
//!
//! One test per behaviour; each row is (what, input, expected). Expected values come from the
//! quota semantics in `docs/semantics.md` (cited as §n) or from the upstream source named in a
//! comment, never from what the tool prints. How state and input are written: `support/mod.rs`.

mod support;

use support::*;

#[test]
fn sidecars_and_init_containers_follow_the_sum_and_init_phase_rules() {
    // §1.3: sum = containers + sidecars; an init container's phase = itself + the sidecars
    // started before it; a sidecar's phase = the sidecars so far; result = max(sum, phases).
    let rows = [
        ("containers are summed", pod("p").app("a", "requests: {cpu: 500m}").app("b", "requests: {cpu: 700m}"), "requests.cpu=1200m"),
        ("an init container larger than the sum wins", pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 2}"), "requests.cpu=2"),
        ("a smaller init container does not add", pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 100m}"), "requests.cpu=500m"),
        ("a sidecar adds to the sum", pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}"), "requests.cpu=800m"),
        (
            "an init container after a sidecar runs beside it",
            pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}").init("i", "requests: {cpu: 1}"),
            "requests.cpu=1300m",
        ),
        (
            "an init container before a sidecar does not see it",
            pod("p").app("a", "requests: {cpu: 500m}").init("i", "requests: {cpu: 1}").sidecar("s", "requests: {cpu: 300m}"),
            "requests.cpu=1",
        ),
        (
            "sidecars accumulate across init phases",
            pod("p")
                .app("a", "requests: {cpu: 100m}")
                .sidecar("s1", "requests: {cpu: 200m}")
                .sidecar("s2", "requests: {cpu: 300m}")
                .init("i", "requests: {cpu: 600m}"),
            "requests.cpu=1100m",
        ),
        (
            "a resource only an init container asks for is charged",
            pod("p").app("a", "requests: {cpu: 100m}").init("i", "requests: {memory: 1Gi}"),
            "requests.cpu=100m,requests.memory=1Gi",
        ),
        (
            "limits follow the same rule (and default the requests)",
            pod("p").app("a", "limits: {cpu: 1}").sidecar("s", "limits: {cpu: 1}").init("i", "limits: {cpu: 2}"),
            "limits.cpu=3,requests.cpu=3",
        ),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, usage(&check_one("", &p.yaml()), COMPUTE), want);
    }
    // The aggregate is what the quota is charged with (§2.2 exceeded message).
    let p = pod("p").app("a", "requests: {cpu: 500m}").sidecar("s", "requests: {cpu: 300m}").init("i", "requests: {cpu: 1}");
    t.row(
        "the quota sees the aggregate",
        summary(&check_one(&quota("q", "", "requests.cpu=1/0"), &p.yaml())),
        exceeded("q", "requests.cpu", "1300m", "0", "1"),
    );
    t.done();
}

#[test]
fn runtime_class_overhead_is_added_to_requests_and_to_existing_nonzero_limits() {
    // §0 step 2: the RuntimeClass plugin sets spec.overhead; §1.3: overhead is added to every
    // request (creating keys) and only to limits that exist and are non-zero.
    let kata = "runtimeClassName: kata";
    let rows = [
        ("no RuntimeClass, no overhead", pod("p").app("a", "requests: {cpu: 1}"), "allowed: requests.cpu=1"),
        ("overhead is added to every request", pod("p").app("a", "requests: {cpu: 1}").with(kata), "allowed: requests.cpu=1250m,requests.memory=120Mi"),
        (
            "overhead is added to an existing limit, not to a missing one",
            pod("p").app("a", "limits: {cpu: 1}").with(kata),
            "allowed: limits.cpu=1250m,requests.cpu=1250m,requests.memory=120Mi",
        ),
        (
            "a zero limit gets no overhead",
            pod("p").app("a", "requests: {cpu: '0'}, limits: {cpu: '0'}").with(kata),
            "allowed: requests.cpu=250m,requests.memory=120Mi",
        ),
        // plugin/pkg/admission/runtimeclass/admission.go prepareObjects
        ("an unknown RuntimeClass is refused", pod("p").with("runtimeClassName: gvisor"), "pod rejected: RuntimeClass \"gvisor\" not found"),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, charged(&check_one(&docs(&[CLUSTER]), &p.yaml()), COMPUTE), want);
    }
    t.done();
}

#[test]
fn pod_level_resources_replace_the_container_aggregate() {
    // §1.3: pod-level requests/limits (cpu, memory, hugepages) replace the aggregate for their
    // keys; overhead is added on top. §0: pod-level limits default missing pod-level requests
    // (when no container requests the resource, both upstream readings agree).
    let rows = [
        (
            "pod-level requests replace the sum",
            pod("p").app("a", "requests: {cpu: 500m}").app("b", "requests: {cpu: 700m}").with("resources: {requests: {cpu: 2}}"),
            "requests.cpu=2",
        ),
        (
            "only the keys set at pod level are replaced",
            pod("p").app("a", "requests: {cpu: 100m, memory: 1Gi}").with("resources: {requests: {cpu: 2}}"),
            "requests.cpu=2,requests.memory=1Gi",
        ),
        (
            "pod-level limits replace the limits",
            pod("p").app("a", "limits: {cpu: 1}").with("resources: {requests: {cpu: 1}, limits: {cpu: 3}}"),
            "limits.cpu=3,requests.cpu=1",
        ),
        (
            "pod-level limits default pod-level requests",
            pod("p").with("resources: {limits: {cpu: 2, memory: 1Gi}}"),
            "limits.cpu=2,limits.memory=1Gi,requests.cpu=2,requests.memory=1Gi",
        ),
        (
            "overhead is added on top of pod-level requests",
            pod("p").with("resources: {requests: {cpu: 2}}").with("runtimeClassName: kata"),
            "requests.cpu=2250m,requests.memory=120Mi",
        ),
    ];
    let mut t = Table::default();
    for (what, p, want) in rows {
        t.row(what, usage(&check_one(&docs(&[CLUSTER]), &p.yaml()), COMPUTE), want);
    }
    t.done();
}

#[test]
fn overhead_added_in_place_to_pod_level_values_go_holds_as_decimals() {
    // §1.3, upstream 1.37.2's PodRequests and PodLimits (component-helpers): a pod-level value
    // Go holds as an inf.Dec (`1.5Gi`: a fraction with a binary suffix) gets the overhead
    // added in place. The kata class's overhead is memory 120Mi. Within one evaluation that
    // counts twice only where 1.37's defaulting made the pod-level limit the request itself (the
    // request larger than the containers' limits); an admission configuration limiting pods
    // makes CheckRequest evaluate the pod twice, and the second evaluation is charged. Every
    // row is what tests/oracle's upstream code answers for the same pod and quota.
    let keys = &["requests.memory", "limits.memory"];
    let kata = |memory: &str, limit: &str| {
        pod("p")
            .app("a", &format!("requests: {{cpu: 100m, memory: 100Mi}}, limits: {{cpu: 100m, memory: {limit}}}"))
            .with(&format!("resources: {{requests: {{memory: {memory}}}}}"))
            .with("runtimeClassName: kata")
    };
    let limits_pods = limited(&["{resource: pods, matchContains: [nvidia.com/gpu]}"]);
    let rows: Vec<(&str, String, Option<&str>, &str)> = vec![
        ("an inf.Dec request, the limit defaulted to it: twice in both", kata("1.5Gi", "100Mi").yaml(), None, "limits.memory=1776Mi,requests.memory=1776Mi"),
        ("the same value as an int64: once", kata("1536Mi", "100Mi").yaml(), None, "limits.memory=1656Mi,requests.memory=1656Mi"),
        ("the containers' limit larger: not the same value, once each", kata("1.5Gi", "2Gi").yaml(), None, "limits.memory=2168Mi,requests.memory=1656Mi"),
        ("evaluated twice (pods limited): the request twice", kata("1.5Gi", "2Gi").yaml(), Some(&limits_pods), "limits.memory=2168Mi,requests.memory=1776Mi"),
        (
            "evaluated twice, the limit the request: four times",
            kata("1.5Gi", "100Mi").yaml(),
            Some(&limits_pods),
            "limits.memory=2016Mi,requests.memory=2016Mi",
        ),
        ("evaluated twice, an int64: once", kata("1536Mi", "2Gi").yaml(), Some(&limits_pods), "limits.memory=2168Mi,requests.memory=1656Mi"),
    ];
    let mut t = Table::default();
    for (what, yaml, admission, want) in rows {
        t.row(what, usage(&only(check_with(&docs(&[CLUSTER]), &yaml, admission, None)), keys), want);
    }
    t.done();
}

#[test]
fn must_specify_requires_cpu_and_memory_keys_on_every_container() {
    let lr_default = limit_range("{type: Container, default: {cpu: 500m}}");
    let lr_request_only = limit_range("{type: Container, defaultRequest: {cpu: 100m}}");
    let must = |what: &str| format!("failed quota: q: must specify {what}");
    let rows = [
        ("cpu is satisfied by a limit (API defaulting copies it)", "", "", "cpu=10/0", pod("p").app("app", "limits: {cpu: 1}"), OK.to_string()),
        ("requests.cpu is satisfied by a request", "", "", "requests.cpu=10/0", pod("p").app("app", "requests: {cpu: 1}"), OK.into()),
        ("requests.cpu is satisfied by a limit too", "", "", "requests.cpu=10/0", pod("p").app("app", "limits: {cpu: 1}"), OK.into()),
        ("cpu needs a request or a limit", "", "", "cpu=10/0", pod("p").app("app", "requests: {memory: 1Gi}"), must("cpu for: app")),
        ("an explicit zero request counts as specified", "", "", "requests.cpu=10/0", pod("p").app("app", "requests: {cpu: '0'}"), OK.into()),
        ("limits.cpu needs a limit", "", "", "limits.cpu=10/0", pod("p").app("app", "requests: {cpu: 1}"), must("limits.cpu for: app")),
        ("resources are listed sorted", "", "", "requests.memory=10Gi/0 memory=10Gi/0", pod("p"), must("memory for: app; requests.memory for: app")),
        (
            "ephemeral-storage, hugepages and extended resources are never required",
            "",
            "",
            "requests.ephemeral-storage=10Gi/0 limits.ephemeral-storage=10Gi/0 hugepages-2Mi=1Gi/0 requests.nvidia.com/gpu=4/0",
            pod("p"),
            OK.into(),
        ),
        ("a pods-only quota requires nothing", "", "", "pods=10/0", pod("p"), OK.into()),
        (
            "init containers are checked",
            "",
            "",
            "limits.cpu=10/0",
            pod("p").app("app", "limits: {cpu: 1}").init("init-db", ""),
            must("limits.cpu for: init-db"),
        ),
        (
            "sidecars are checked, names sorted",
            "",
            "",
            "limits.cpu=10/0",
            pod("p").app("web", "").app("api", "limits: {cpu: 1}").sidecar("log", ""),
            must("limits.cpu for: log,web"),
        ),
        (
            "each resource names its own containers",
            "",
            "",
            "limits.cpu=10/0 requests.memory=10Gi/0",
            pod("p").app("app", "limits: {cpu: 1}").app("web", "requests: {memory: 1Gi}").init("init", ""),
            must("limits.cpu for: init,web; requests.memory for: app,init"),
        ),
        ("a LimitRange default limit satisfies it", lr_default.as_str(), "", "limits.cpu=10/0", pod("p"), OK.into()),
        (
            "a LimitRange default request does not give a limit",
            lr_request_only.as_str(),
            "",
            "limits.cpu=10/0 requests.cpu=10/0",
            pod("p"),
            must("limits.cpu for: app"),
        ),
        ("pod-level resources turn the check off", "", "", "limits.cpu=10/0 limits.memory=10Gi/0", pod("p").with("resources: {requests: {cpu: 1}}"), OK.into()),
        ("only quotas that select the pod require anything", "", "scopes: [Terminating]", "limits.cpu=10/0", pod("p"), OK.into()),
        // §5 step c: the constraint is checked before the usage stats of the same quota.
        ("must specify comes before status unknown", "", "", "limits.cpu=10", pod("p"), must("limits.cpu for: app")),
    ];
    let mut t = Table::default();
    for (what, extra_state, scopes, hard, p, want) in rows {
        let state = docs(&[quota("q", scopes, hard), extra_state.to_string()]);
        t.row(what, summary(&check_one(&state, &p.yaml())), want);
    }
    // §2.3: a 403 naming the pod.
    let d = check_one(&quota("q", "", "limits.cpu=10/0"), &pod("p").yaml());
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: failed quota: q: must specify limits.cpu for: app");
    t.done();
}

#[test]
fn objects_are_counted_as_count_resource_group() {
    // §4: count/<resource>.<group> (count/<resource> for core); the legacy names configmaps,
    // secrets, resourcequotas, replicationcontrollers are charged with their count/ twins.
    let rc = workload("ReplicationController", "rc", "replicas: 1", &pod("p"));
    let rows = [
        ("a Deployment", "count/deployments.apps", workload("Deployment", "d", "replicas: 1", &pod("p"))),
        ("a Job", "count/jobs.batch", workload("Job", "j", "", &pod("p").with("restartPolicy: Never"))),
        ("a CronJob", "count/cronjobs.batch", workload("CronJob", "cj", "", &pod("p").with("restartPolicy: Never"))),
        ("an Ingress", "count/ingresses.networking.k8s.io", object("networking.k8s.io/v1", "Ingress", "i", "spec: {}\n")),
        ("a ServiceAccount", "count/serviceaccounts", object("v1", "ServiceAccount", "sa", "")),
        ("a custom resource (plural guessed)", "count/widgets.example.com", object("example.com/v1", "Widget", "w", "spec: {}\n")),
        ("a custom resource ending in y", "count/policies.example.com", object("example.com/v1", "Policy", "pol", "spec: {}\n")),
        ("a ConfigMap, legacy name", "configmaps", object("v1", "ConfigMap", "c", "")),
        ("a ConfigMap, count name", "count/configmaps", object("v1", "ConfigMap", "c", "")),
        ("a Secret, legacy name", "secrets", object("v1", "Secret", "s", "")),
        ("a Secret, count name", "count/secrets", object("v1", "Secret", "s", "")),
        ("a ResourceQuota, legacy name", "resourcequotas", unsynced_quota("new", "", "pods=1")),
        ("a ResourceQuota, count name", "count/resourcequotas", unsynced_quota("new", "", "pods=1")),
        ("a ReplicationController, legacy name", "replicationcontrollers", rc.clone()),
        ("a ReplicationController, count name", "count/replicationcontrollers", rc),
    ];
    let mut t = Table::default();
    for (what, key, yaml) in &rows {
        t.row(what, summary(&check_one(&quota("q", "", &format!("{key}=1/1")), yaml)), exceeded("q", key, "1", "1", "1"));
    }
    // Both names limited: only the one that is exceeded is named.
    t.row(
        "legacy and count names in one quota",
        summary(&check_one(&quota("q", "", "configmaps=5/0 count/configmaps=1/1"), &object("v1", "ConfigMap", "c", ""))),
        exceeded("q", "count/configmaps", "1", "1", "1"),
    );
    // Both are charged (usage), not just the one the quota names.
    t.row(
        "a Secret is charged under both names",
        usage(&check_one("", &object("v1", "Secret", "s", "")), &["secrets", "count/secrets"]),
        "count/secrets=1,secrets=1",
    );
    // The guess is said out loud.
    let d = check_one("", &object("example.com/v1", "Widget", "w", "spec: {}\n"));
    let noted = d.notes.iter().any(|n| n.contains("count/widgets.example.com") && n.contains("guess"));
    t.row("the guessed plural is noted", noted.to_string(), "true");
    t.done();
}

#[test]
fn cluster_scoped_objects_and_events_are_not_checked() {
    // §5: Validate returns early for non-namespaced requests; §4: events (core and
    // events.k8s.io) are ignored resources. No quota is even consulted.
    let state = quota("q", "", "count/events=0/0 count/events.events.k8s.io=0/0 count/namespaces=0/0 count/priorityclasses.scheduling.k8s.io=0/0");
    let rows = [
        ("a Namespace", object("v1", "Namespace", "team", "")),
        ("a PriorityClass", priority_class("urgent", 5, false)),
        ("a StorageClass", storage_class("fast", false, "2024-01-01T00:00:00Z")),
        ("a core Event", object("v1", "Event", "e", "involvedObject: {kind: Pod, name: p}\n")),
        (
            "an events.k8s.io Event",
            object(
                "events.k8s.io/v1",
                "Event",
                "e",
                "eventTime: '2024-01-01T00:00:00.000000Z'\nreportingController: x\nreportingInstance: y\naction: a\nreason: r\n",
            ),
        ),
    ];
    let mut t = Table::default();
    for (what, yaml) in &rows {
        let d = check_one(&state, yaml);
        t.row(what, format!("{} ({} quotas consulted)", summary(&d), d.quotas.len()), "allowed (0 quotas consulted)");
    }
    t.done();
}

#[test]
fn claims_storage_class_and_storage_rounding() {
    // §4.2: class = beta annotation if present (even empty), else storageClassName; the default
    // class is set only when neither is there (explicit "" stays empty); storage rounded up to
    // whole bytes; per-class names.
    let with_class = |class: &str, size: &str| {
        let mut charged = [
            format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims=1"),
            format!("{class}.storageclass.storage.k8s.io/requests.storage={size}"),
            format!("requests.storage={size}"),
        ];
        charged.sort();
        format!("{OK}: {}", charged.join(","))
    };
    let no_class = |size: &str| format!("{OK}: requests.storage={size}");
    let two_defaults = docs(&[storage_class("old", true, "2020-01-01T00:00:00Z"), storage_class("new", true, "2024-01-01T00:00:00Z")]);
    let no_default = storage_class("gold", false, "2020-01-01T00:00:00Z");
    let shared = docs(&[CLUSTER]);
    let rows = [
        ("no class at all gets the default class", shared.clone(), claim("1Gi", "", None), with_class("standard", "1Gi")),
        ("an explicit empty class stays empty", shared.clone(), claim("1Gi", "storageClassName: ''", None), no_class("1Gi")),
        ("an explicit class", shared.clone(), claim("1Gi", "storageClassName: gold", None), with_class("gold", "1Gi")),
        ("the beta annotation names the class", shared.clone(), claim("1Gi", "", Some("gold")), with_class("gold", "1Gi")),
        ("the beta annotation wins over storageClassName", shared.clone(), claim("1Gi", "storageClassName: bronze", Some("gold")), with_class("gold", "1Gi")),
        ("an empty beta annotation is a class: no default", shared.clone(), claim("1Gi", "", Some("")), no_class("1Gi")),
        ("storage is rounded up to whole bytes", shared.clone(), claim("1500m", "storageClassName: ''", None), no_class("2")),
        ("half a byte is one byte", shared.clone(), claim("500m", "storageClassName: ''", None), no_class("1")),
        ("no default class in the cluster", no_default, claim("1Gi", "", None), no_class("1Gi")),
        ("the newest default class wins", two_defaults, claim("1Gi", "", None), with_class("new", "1Gi")),
        (
            "a per-class quota",
            cluster(&[quota("q", "", "gold.storageclass.storage.k8s.io/requests.storage=10Gi/8Gi requests.storage=100Gi/0")]),
            claim("3Gi", "storageClassName: gold", None),
            exceeded("q", "gold.storageclass.storage.k8s.io/requests.storage", "3Gi", "8Gi", "10Gi"),
        ),
        (
            "the default class is charged to its per-class names",
            cluster(&[quota("q", "", "standard.storageclass.storage.k8s.io/persistentvolumeclaims=0/0")]),
            claim("1Gi", "", None),
            exceeded("q", "standard.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "0", "0"),
        ),
    ];
    let mut t = Table::default();
    for (what, state, yaml, want) in rows {
        // The storage names: requests.storage and the per-class ones, not the counts.
        t.row(what, charged_where(&check_one(&state, &yaml), |k| k.contains("storage")), want);
    }
    t.done();
}

#[test]
fn services_node_ports_and_load_balancers() {
    // §4.1: NodePort charges one node port per port; LoadBalancer one load balancer and a node
    // port per port, or with allocateLoadBalancerNodePorts false only the explicit nodePorts.
    let keys = &["services", "services.nodeports", "services.loadbalancers"];
    let two_ports = "ports: [{port: 80}, {port: 443}]";
    let rows = [
        ("ClusterIP", String::new(), service(two_ports), "allowed: services=1"),
        ("ExternalName", String::new(), service("type: ExternalName, externalName: db.example.com"), "allowed: services=1"),
        ("NodePort", String::new(), service(&format!("type: NodePort, {two_ports}")), "allowed: services=1,services.nodeports=2"),
        (
            "LoadBalancer",
            String::new(),
            service(&format!("type: LoadBalancer, {two_ports}")),
            "allowed: services=1,services.loadbalancers=1,services.nodeports=2",
        ),
        (
            "LoadBalancer without node port allocation, one explicit",
            String::new(),
            service("type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{port: 80, nodePort: 30080}, {port: 443}]"),
            "allowed: services=1,services.loadbalancers=1,services.nodeports=1",
        ),
        (
            "LoadBalancer without node port allocation, none explicit",
            String::new(),
            service(&format!("type: LoadBalancer, allocateLoadBalancerNodePorts: false, {two_ports}")),
            "allowed: services=1,services.loadbalancers=1",
        ),
    ];
    let mut t = Table::default();
    for (what, state, yaml, want) in &rows {
        t.row(what, charged(&check_one(state, yaml), keys), want);
    }
    let quota_rows = [
        (
            "node ports over the quota",
            "services.nodeports=2/1",
            service(&format!("type: NodePort, {two_ports}")),
            exceeded("q", "services.nodeports", "2", "1", "2"),
        ),
        (
            "a load balancer over the quota",
            "services.loadbalancers=0/0",
            service(&format!("type: LoadBalancer, {two_ports}")),
            exceeded("q", "services.loadbalancers", "1", "0", "0"),
        ),
        (
            "a load balancer without node ports fits a full node-port quota",
            "services.nodeports=1/1",
            service(&format!("type: LoadBalancer, allocateLoadBalancerNodePorts: false, {two_ports}")),
            OK.into(),
        ),
    ];
    for (what, hard, yaml, want) in quota_rows {
        t.row(what, summary(&check_one(&quota("q", "", hard), &yaml)), want);
    }
    t.done();
}
