//! Rule table, autoscalers: the replicas a workload runs when an HPA or a KEDA ScaledObject
//! sets them (kube-controller-manager's HPA controller moves a target into [minReplicas,
//! maxReplicas] before it reads any metric), and how many of the maximum quota lets run.
//! docs/autoscaling.md says the same in words.

mod support;

use support::*;

/// Quota `compute` of the scenario: 8 pods of 500m/1 cpu fit.
fn compute(used_pods: u32) -> String {
    let (r, l) = (used_pods * 500, used_pods);
    quota("compute", "", &format!("requests.cpu=4/{r}m limits.cpu=8/{l} pods=10/{used_pods}"))
}

fn web(replicas: &str) -> String {
    let spec = if replicas.is_empty() { String::new() } else { format!("replicas: {replicas}") };
    workload("Deployment", "web", &spec, &pod("p").app("app", "requests: {cpu: 500m}, limits: {cpu: 1}"))
}

/// The live Deployment: `replicas` in its spec, `running` pods in its status.
fn web_live(replicas: u32, running: u32) -> String {
    format!("{}status: {{replicas: {running}}}\n", web(&replicas.to_string()).replacen("metadata: {name: web}", "metadata: {name: web, namespace: ns}", 1))
}

fn hpa(name: &str, target: &str, min: u32, max: u32) -> String {
    format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {target}}}, minReplicas: {min}, maxReplicas: {max}}}\n"
    )
}

fn scaled_object(name: &str, target: &str, fields: &str) -> String {
    format!(
        "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {{name: {name}}}\nspec: {{scaleTargetRef: {{name: {target}}}{}, triggers: []}}\n",
        more(fields)
    )
}

/// `pods admitted/wanted; ceiling fits/max (quota: resources)`, or `no autoscaler`.
fn scaled(d: &DocumentReport) -> String {
    let pods = format!("pods {}/{}", d.replicas_admitted.unwrap_or(-1), d.replicas.unwrap_or(-1));
    match &d.autoscaling {
        Some(c) => format!(
            "{pods}; {} {} ceiling {}/{} ({}: {})",
            c.autoscaler_kind.short(),
            c.autoscaler,
            c.fits,
            c.max_replicas,
            c.stopped.quota.as_deref().unwrap_or("-"),
            c.stopped.resources.join(",")
        ),
        None => format!("{pods}; no autoscaler"),
    }
}

#[test]
fn workloads_run_the_replicas_their_autoscaler_sets_and_quota_caps_the_maximum() {
    // (what, state, input, the Deployment's answer)
    let rows: Vec<(&str, Vec<String>, Vec<String>, &str)> = vec![
        (
            "a new Deployment with an HPA after it: it starts at its replicas within [min, max]; quota lets 8 of 20 run",
            vec![compute(0)],
            vec![web("5"), hpa("web", "web", 3, 20)],
            "pods 5/5; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "the HPA first in the input: the same answer, on the Deployment's document",
            vec![compute(0)],
            vec![hpa("web", "web", 3, 20), web("5")],
            "pods 5/5; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "minReplicas that does not fit is a refusal of the pods above 8",
            vec![compute(0)],
            vec![web("5"), hpa("web", "web", 12, 20)],
            "pods 8/12; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "an HPA alone on a Deployment that runs 5: the controller raises it to 12 at once, 3 more fit",
            vec![compute(5), web_live(5, 5)],
            vec![hpa("web", "web", 12, 20)],
            "pods 8/12; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "a Deployment without replicas that exists keeps its live count (kubectl apply leaves the field)",
            vec![compute(6), web_live(6, 6)],
            vec![web("")],
            "pods 6/6; no autoscaler",
        ),
        (
            "without replicas, an HPA in the cluster: its desired count (the live count here) within [min, max]",
            vec![compute(6), web_live(6, 6), hpa("web", "web", 3, 20).replacen("{name: web}", "{name: web, namespace: ns}", 1)],
            vec![web("")],
            "pods 6/6; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "a ScaledObject: defaults min 0, max 100; a new Deployment keeps its replicas",
            vec![compute(0)],
            vec![web("2"), scaled_object("web", "web", "")],
            "pods 2/2; ScaledObject web ceiling 8/100 (compute: limits.cpu,requests.cpu)",
        ),
        (
            "a ScaledObject's minReplicaCount raises the count like an HPA's",
            vec![compute(0)],
            vec![web("1"), scaled_object("web", "web", "minReplicaCount: 4, maxReplicaCount: 6")],
            "pods 4/4; ScaledObject web ceiling 6/6 (-: )",
        ),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let reports = check_all(&cluster(&state), &docs(&input));
        let first = reports.iter().find(|d| d.kind == "Deployment").unwrap_or(&reports[0]);
        t.row(what, scaled(first), want);
    }
    t.done();
}

#[test]
fn an_autoscaler_in_the_input_is_counted_once_with_its_workload() {
    // The HPA comes first: the Deployment's document carries the answer, the HPA's says nothing more.
    let reports = check_all(&cluster(&[compute(0)]), &docs(&[hpa("web", "web", 12, 20), web("5")]));
    assert_eq!(reports[0].autoscaling, None, "{:?}", reports[0]);
    assert_eq!(scaled(&reports[1]), "pods 8/12; HPA web ceiling 8/20 (compute: limits.cpu,requests.cpu)");
    assert!(reports[1].notes.iter().any(|n| n == "HPA web sets the replicas to 12: its minimum raises the manifest's count (5)"), "{:?}", reports[1].notes);
}

#[test]
fn a_keda_made_hpa_is_its_scaled_object() {
    // Live, KEDA's operator has made keda-hpa-web for ScaledObject web: one autoscaler.
    let made = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: keda-hpa-web\n  namespace: ns\n  ownerReferences: [{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: web, uid: u, controller: true}]\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 30}\nstatus: {desiredReplicas: 7, currentReplicas: 6}\n";
    let so = scaled_object("web", "web", "maxReplicaCount: 30").replacen("{name: web}", "{name: web, namespace: ns}", 1);
    let d = only(check_all(&cluster(&[compute(6), web_live(6, 6), made.to_string(), so]), &web("")));
    assert_eq!(scaled(&d), "pods 7/7; ScaledObject web ceiling 8/30 (compute: limits.cpu,requests.cpu)");
    assert!(!d.notes.iter().any(|n| n.contains("autoscalers target")), "{:?}", d.notes);
}

#[test]
fn autoscalers_that_scale_nothing_say_so() {
    let rows = [
        (hpa("web", "gone", 1, 3), "HPA web targets deployment/gone, which is neither in the cluster nor in the manifests: it scales nothing until that exists"),
        (
            hpa("web", "web", 1, 3).replace("kind: Deployment", "kind: Rollout").replace("apps/v1", "argoproj.io/v1alpha1"),
            "HPA web targets Rollout/web: a kind whose pods this tool does not replay (it replays Deployments, StatefulSets, ReplicaSets and ReplicationControllers)",
        ),
    ];
    for (input, note) in rows {
        let d = only(check_all(&cluster(&[compute(0)]), &input));
        assert!(d.fully_admitted());
        assert!(d.notes.iter().any(|n| n == note), "{:?}", d.notes);
    }
}

/// A VerticalPodAutoscaler on Deployment `web` (container `app`) with `target` as its
/// recommendation (none when empty), in `mode` (left out when empty).
fn vpa(name: &str, mode: &str, target: &str, fields: &str) -> String {
    let policy = if mode.is_empty() { String::new() } else { format!(", updatePolicy: {{updateMode: \"{mode}\"}}") };
    let status = if target.is_empty() {
        String::new()
    } else {
        format!("status: {{recommendation: {{containerRecommendations: [{{containerName: app, target: {{{target}}}}}]}}}}\n")
    };
    format!(
        "apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{targetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}{policy}{}}}\n{status}",
        more(fields)
    )
}

/// `pods admitted/wanted; VPA name fits/pods (quota: resources) per pod`, or `no VPA`.
fn vertically(d: &DocumentReport) -> String {
    let pods = format!("pods {}/{}", d.replicas_admitted.unwrap_or(-1), d.replicas.unwrap_or(-1));
    match &d.vpa {
        Some(v) => {
            format!(
                "{pods}; VPA {} {}/{} ({}: {}) {}",
                v.vpa,
                v.fits,
                v.pods,
                v.stopped.quota.as_deref().unwrap_or("-"),
                v.stopped.resources.join(","),
                v.per_pod.join(",")
            )
        }
        None => format!("{pods}; no VPA"),
    }
}

#[test]
fn pods_come_back_at_the_vpa_target_as_far_as_quota_lets_them() {
    // Quota compute holds 8 pods of 500m/1 cpu; at the VPA's 1200m (limits 2400m) it holds 3.
    // (what, state, input, the answer of the document that carries it)
    let rows: Vec<(&str, Vec<String>, Vec<String>, &str)> = vec![
        (
            "a running Deployment: 3 of its 5 pods come back at the target, 2 stay evicted",
            vec![compute(5), web_live(5, 5), vpa("web", "", "cpu: 1200m", "")],
            vec![web("5")],
            "pods 5/5; VPA web 3/5 (compute: limits.cpu,requests.cpu) limits.cpu=2400m,requests.cpu=1200m",
        ),
        (
            "the VPA checked alone against the running Deployment: the same answer",
            vec![compute(5), web_live(5, 5)],
            vec![vpa("web", "Recreate", "cpu: 1200m", "")],
            "pods -1/-1; VPA web 3/5 (compute: limits.cpu,requests.cpu) limits.cpu=2400m,requests.cpu=1200m",
        ),
        (
            "a new Deployment's pods are created at the target: 3 of 5 fit",
            vec![compute(0)],
            vec![vpa("web", "Auto", "cpu: 1200m", ""), web("5")],
            "pods 3/5; no VPA",
        ),
        (
            "maxAllowed keeps the target at 600m: all 5 come back",
            vec![
                compute(5),
                web_live(5, 5),
                vpa("web", "", "cpu: 1200m", "resourcePolicy: {containerPolicies: [{containerName: '*', maxAllowed: {cpu: 600m}}]}"),
            ],
            vec![web("5")],
            "pods 5/5; VPA web 5/5 (-: ) requests.cpu=600m",
        ),
        (
            "RequestsOnly keeps the limits: requests.cpu alone stops the rest",
            vec![
                compute(5),
                web_live(5, 5),
                vpa("web", "", "cpu: 900m", "resourcePolicy: {containerPolicies: [{containerName: app, controlledValues: RequestsOnly}]}"),
            ],
            vec![web("5")],
            "pods 5/5; VPA web 4/5 (compute: requests.cpu) requests.cpu=900m",
        ),
        (
            "updateMode Initial leaves running pods",
            vec![compute(5), web_live(5, 5), vpa("web", "Initial", "cpu: 1200m", "")],
            vec![web("5")],
            "pods 5/5; no VPA",
        ),
        ("updateMode Off changes nothing, new pods included", vec![compute(0)], vec![vpa("web", "Off", "cpu: 1200m", ""), web("5")], "pods 5/5; no VPA"),
        ("no recommendation yet: nothing changes", vec![compute(0)], vec![vpa("web", "", "", ""), web("5")], "pods 5/5; no VPA"),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let reports = check_all(&cluster(&state), &docs(&input));
        let d = reports.iter().find(|d| d.vpa.is_some()).or_else(|| reports.iter().find(|d| d.kind == "Deployment")).unwrap_or(&reports[0]);
        t.row(what, vertically(d), want);
    }
    t.done();
}

#[test]
fn the_vpa_notes_say_why_it_changes_nothing() {
    let rows = [
        (
            vec![compute(0)],
            vec![vpa("web", "Off", "cpu: 1200m", ""), web("5")],
            "VPA web is in updateMode Off: it changes no pod (its recommendation is advice only)",
        ),
        (
            vec![compute(0)],
            vec![vpa("web", "", "", ""), web("5")],
            "VPA web has no recommendation yet: new pods keep the template's requests until its recommender writes one",
        ),
        (
            vec![compute(5), web_live(5, 5), vpa("web", "Initial", "cpu: 1200m", "")],
            vec![web("5")],
            "VPA web (updateMode Initial) writes its target into new pods only: the 5 running keep their requests",
        ),
        (
            vec![compute(0)],
            vec![vpa("other", "", "cpu: 1", "").replace("name: web}}", "name: gone}}")],
            "VPA other targets deployment/gone, which is neither in the cluster nor in the manifests: it changes no pod until that exists",
        ),
    ];
    for (state, input, note) in rows {
        let reports = check_all(&cluster(&state), &docs(&input));
        assert!(reports.iter().any(|d| d.notes.iter().any(|n| n == note)), "{note}: {:?}", reports.iter().map(|d| &d.notes).collect::<Vec<_>>());
    }
}

#[test]
fn a_pod_refused_at_the_vpa_target_carries_the_servers_words_and_the_webhooks_change() {
    let reports = check_all(&cluster(&[compute(0)]), &docs(&[vpa("web", "", "cpu: 1200m", ""), web("5")]));
    let d = reports.iter().find(|d| d.kind == "Deployment").unwrap();
    let message = d.pod_message.as_deref().unwrap_or_default();
    assert!(
        message.contains("exceeded quota: compute, requested: limits.cpu=2400m,requests.cpu=1200m, used: limits.cpu=7200m,requests.cpu=3600m"),
        "{message}"
    );
    let mutations = d.pods.as_ref().map(|p| p.mutations.clone()).unwrap_or_default();
    assert!(
        mutations.iter().any(|m| m == "VPA web's admission webhook sets container \"app\"'s requests to cpu=1200m and limits to cpu=2400m"),
        "{mutations:?}"
    );
}
#[test]
fn a_scaled_job_runs_at_most_its_maximum_of_jobs_each_with_its_pods() {
    // KEDA's ScaledJob creates up to maxReplicaCount Jobs at once, each running parallelism pods
    // (within its completions): 2 pods of 500m/1 cpu a Job, against quota compute.
    let job = |max: u32, parallelism: u32| {
        format!(
            "apiVersion: keda.sh/v1alpha1\nkind: ScaledJob\nmetadata: {{name: batch}}\nspec:\n  maxReplicaCount: {max}\n  triggers: []\n  jobTargetRef:\n    parallelism: {parallelism}\n    template:\n      spec:\n        restartPolicy: Never\n        containers: [{{name: w, image: x, resources: {{requests: {{cpu: 500m}}, limits: {{cpu: '1'}}}}}}]\n"
        )
    };
    // (used pods of 500m/1 cpu, max Jobs, parallelism, Jobs that fit, the sentence's end)
    let rows = [
        (0, 10, 2, 4, "quota compute lets 4 run (limits.cpu, requests.cpu): scale-ups past 4 will be refused"),
        (0, 3, 2, 3, "the quotas let all 3 run"),
        (6, 10, 2, 1, "quota compute lets 1 run (limits.cpu, requests.cpu): scale-ups past 1 will be refused"),
        (0, 10, 1, 8, "quota compute lets 8 run (limits.cpu, requests.cpu): scale-ups past 8 will be refused"),
    ];
    for (used, max, parallelism, fits, end) in rows {
        let d = only(check_all(&cluster(&[compute(used)]), &job(max, parallelism)));
        let c = d.autoscaling.clone().unwrap_or_else(|| panic!("no ceiling: {:?}", d.notes));
        assert_eq!((c.fits, c.max_replicas), (fits, max as i32), "{used} {max} {parallelism}: {c:?}");
        assert_eq!(c.sentence(), format!("ScaledJob batch scales its Jobs from 0 to {max} Jobs; {end}"));
        assert!(d.notes.iter().any(|n| n.contains(&format!("runs up to {max} Jobs at once, {parallelism} pod(s) each"))), "{:?}", d.notes);
    }
}
