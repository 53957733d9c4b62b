//! Live test of `check` against a real Kueue v0.17.0 (tests/cluster/kueue.sh) beside a real
//! kube-apiserver and its Job controller: check's prediction for Jobs in a Kueue queue first,
//! then the same Jobs created, in order, and what Kueue did (each Workload's QuotaReserved
//! condition: its status, reason and message) and what the API server said of the pods of the
//! Job Kueue admitted (the Job controller's FailedCreate event). Between the two, the guard,
//! called by the API server at apply time, warns of the same.
//!
//! The ClusterQueue and ResourceFlavor (cluster-scoped) are this test's own, named after its
//! namespace, and deleted at the end, also when an assertion fails.
//!
//! `KUBECTL_QUOTA_KUEUE` names Kueue's state directory (`kueue.sh env`); `none` skips quietly
//! (the harness runs no Kueue for this release), unset skips loudly except under CI=true.

mod common;

use common::autoscalers::controller_dir;
use common::live::{
    apply, client, drop_namespace, eventually, guard_certs, kubectl_apply, kubectl_here, lab, new_namespace, newest_failed_create, plugin_stdin, text,
    warnings, LocalGuard, Unregister,
};
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use serde_json::{json, Value};

fn kueue_api(c: &kube::Client, ns: Option<&str>, kind: &str, plural: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta2", kind), plural);
    match ns {
        Some(ns) => Api::namespaced_with(c.clone(), ns, &ar),
        None => Api::all_with(c.clone(), &ar),
    }
}

/// The QuotaReserved condition (status, reason, message) of the Workload Kueue made for Job
/// `job`, once it has one.
async fn quota_reserved(c: &kube::Client, ns: &str, job: &str) -> Result<(String, String, String), String> {
    let list = kueue_api(c, Some(ns), "Workload", "workloads").list(&ListParams::default()).await.map_err(|e| e.to_string())?;
    let w = list
        .items
        .iter()
        .find(|w| w.metadata.owner_references.iter().flatten().any(|r| r.kind == "Job" && r.name == job))
        .ok_or_else(|| format!("no Workload for job {job} yet"))?;
    let v = serde_json::to_value(w).unwrap();
    let cond = v["status"]["conditions"].as_array().into_iter().flatten().find(|c| c["type"] == "QuotaReserved").ok_or("no QuotaReserved condition yet")?;
    let s = |k: &str| cond[k].as_str().unwrap_or_default().to_string();
    Ok((s("status"), s("reason"), s("message")))
}

/// The QuotaReserved condition of a Job Kueue holds, once Kueue has said why.
async fn held(c: &kube::Client, ns: &str, job: &str) -> (String, String, String) {
    eventually(&format!("Kueue's answer for job {job}"), 60, || async {
        match quota_reserved(c, ns, job).await? {
            r if r.0 == "False" && !r.2.is_empty() => Ok(r),
            other => Err(format!("{other:?}")),
        }
    })
    .await
}

/// The QuotaReserved condition of a Job Kueue admits, once it has, within `seconds`.
async fn admitted(c: &kube::Client, ns: &str, job: &str, seconds: u64) -> (String, String, String) {
    eventually(&format!("Kueue admits job {job}"), seconds, || async {
        match quota_reserved(c, ns, job).await? {
            r if r.0 == "True" => Ok(r),
            other => Err(format!("{other:?}")),
        }
    })
    .await
}

/// ClusterQueue `cq`'s first total of status list `list` (`flavorsReservation`,
/// `flavorsUsage`), as Kueue prints it.
async fn cq_total(c: &kube::Client, cq: &str, list: &str) -> Result<String, String> {
    let v = serde_json::to_value(kueue_api(c, None, "ClusterQueue", "clusterqueues").get(cq).await.map_err(|e| e.to_string())?).unwrap();
    Ok(v.pointer(&format!("/status/{list}/0/resources/0/total")).and_then(Value::as_str).unwrap_or_default().to_string())
}

fn job(name: &str, queue: &str, cpu: &str, parallelism: i64) -> String {
    // Suspended as Kueue's Job webhook makes it (its webhook is not registered in the lab).
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}\nspec:\n  suspend: true\n  parallelism: {parallelism}\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: main, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn check_says_what_kueue_and_then_resourcequota_do_with_jobs() {
    let Some(kubeconfig) = lab() else { return };
    if controller_dir("KUBECTL_QUOTA_KUEUE", "Kueue", "tests/cluster/kueue.sh").is_none() {
        return;
    }
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-kueue").await;
    let (flavor, cq) = (format!("{ns}-default"), format!("{ns}-batch"));
    let kind = |k: &str, p: &str| ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta2", k), p);
    let _unregister =
        Unregister::default().and_dynamic(&c, &kind("ClusterQueue", "clusterqueues"), &cq).and_dynamic(&c, &kind("ResourceFlavor", "resourceflavors"), &flavor);
    let label = json!({"metadata": {"labels": {"kq-kueue-test": ns}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let setup = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {flavor}}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {cq}}}\nspec:\n  namespaceSelector: {{matchLabels: {{kq-kueue-test: {ns}}}}}\n  resourceGroups: [{{coveredResources: [cpu], flavors: [{{name: {flavor}, resources: [{{name: cpu, nominalQuota: '10'}}]}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: team}}\nspec: {{clusterQueue: {cq}}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute}}\nspec: {{hard: {{requests.cpu: 9500m}}}}\n"
    );
    apply(&c, &ns, &setup).await.unwrap();
    // A running Job of 9 cpu: Kueue reserves 9 of the 10, and its pod uses 9 of the quota.
    apply(&c, &ns, &job("big", "team", "9", 1)).await.unwrap();
    admitted(&c, &ns, "big", 90).await;
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    eventually("the quota counts job big's pod", 90, || async {
        let q = quotas.get("compute").await.map_err(|e| e.to_string())?;
        let used = q.status.and_then(|s| s.used).and_then(|u| u.get("requests.cpu").map(|q| q.0.clone())).unwrap_or_default();
        if used == "9" {
            Ok(())
        } else {
            Err(format!("used {used}"))
        }
    })
    .await;
    // Kueue's status of the ClusterQueue says 9 reserved (what a live check reads).
    eventually("ClusterQueue status: 9 cpu reserved", 60, || async {
        match cq_total(&c, &cq, "flavorsReservation").await? {
            total if total == "9" => Ok(()),
            total => Err(format!("reserved {total}")),
        }
    })
    .await;

    // check's prediction, live.
    let jobs = [job("train", "team", "2", 1), job("eval", "team", "1", 1), job("sweep", "sweeps", "500m", 4), job("huge", "team", "6", 2)];
    let input = jobs.join("---\n");
    let out = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &input);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    let doc = |i: usize| &report["documents"][i];
    let said =
        |i: usize| (doc(i)["kueue"]["verdict"].as_str().unwrap_or_default().to_string(), doc(i)["kueue"]["message"].as_str().unwrap_or_default().to_string());

    // The guard, called by the API server at apply time (a server-side dry run: nothing is
    // stored), says the same of the first two: train held by Kueue, its pod then refused by
    // quota; eval admitted by Kueue, its pod refused by quota.
    if kubectl_here("test the guard with Kueue") {
        let certs = guard_certs(&kubeconfig, "guard-kueue");
        let _guard = LocalGuard::start(&kubeconfig, &certs, "kueue", &[]);
        let warned = |job: &str| warnings(&kubectl_apply(&kubeconfig, job, &["-n", &ns, "--dry-run=server"]));
        let said_train = eventually("the guard to warn at apply time, its caches synced", 60, || async {
            match warned(&jobs[0]) {
                w if w.len() == 2 => Ok(w),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
        let pod_refusal = |d: &Value| d["podMessage"].as_str().unwrap_or_default().to_string();
        assert_eq!(
            said_train,
            [
                format!("once Kueue admits it, quota compute will refuse the pod of job/train: {}", pod_refusal(doc(0))),
                format!("Kueue will keep job/train suspended for now (LocalQueue team, ClusterQueue {cq}): {}", said(0).1),
            ]
        );
        assert_eq!(warned(&jobs[1]), [format!("Kueue admits it now, but quota compute will refuse the pod of job/eval: {}", pod_refusal(doc(1)))]);
        let _ = std::fs::remove_dir_all(&certs);
    }

    // The same Jobs created, in order; what Kueue and the API server did.
    for j in &jobs {
        apply(&c, &ns, j).await.unwrap();
    }
    let train = held(&c, &ns, "train").await;
    assert_eq!(train.1, "Pending", "{train:?}");
    assert_eq!(said(0), ("pending".to_string(), train.2.clone()), "job train: check and Kueue differ");
    // `why` on the waiting Job: held by Kueue, in its words, with the quota the flavor lacks.
    let why = plugin_stdin(&kubeconfig, &["why", "job/train", "-n", &ns, "-o", "json"], "");
    let why: Value = serde_json::from_slice(&why.stdout).unwrap_or_else(|e| panic!("why: {e}: {}", text(&why.stderr)));
    assert_eq!((why["verdict"].as_str(), why["kueue"]["message"].as_str()), (Some("heldByKueue"), Some(train.2.as_str())), "{why:#}");
    assert!(why["changes"][0].as_str().unwrap_or_default().contains("needs 1 more cpu"), "{why:#}");

    let eval = admitted(&c, &ns, "eval", 60).await;
    assert_eq!(said(1).0, "admitted", "job eval: Kueue admitted it ({eval:?}); check said {:?}", said(1));
    let refused = eventually("the Job controller's FailedCreate for job eval", 90, || async {
        newest_failed_create(&c, &ns, |n| n == "eval").await.ok_or_else(|| "no FailedCreate event on job eval yet".to_string())
    })
    .await;
    let predicted = doc(1)["podMessage"].as_str().unwrap_or_default();
    assert!(!predicted.is_empty() && refused.ends_with(predicted), "job eval's pods: the server said {refused:?}, check {predicted:?}");

    // describe shows the queue as Kueue's status has it: big's 9 and eval's 1 of 10 cpu.
    eventually("ClusterQueue status: 10 cpu reserved and admitted", 60, || async {
        match (cq_total(&c, &cq, "flavorsReservation").await?, cq_total(&c, &cq, "flavorsUsage").await?) {
            (r, u) if r == "10" && u == "10" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let described = plugin_stdin(&kubeconfig, &["describe", "-n", &ns, "-o", "json"], "");
    let described: Value = serde_json::from_slice(&described.stdout).unwrap_or_else(|e| panic!("describe: {e}: {}", text(&described.stderr)));
    let queue = described.as_array().unwrap().iter().find(|e| e["kind"] == "LocalQueue").unwrap_or_else(|| panic!("no LocalQueue in {described:#}"));
    assert_eq!((queue["localQueue"].as_str(), queue["clusterQueue"].as_str()), (Some("team"), Some(cq.as_str())), "{queue:#}");
    let row = &queue["rows"][0];
    let cells = |keys: &[&str]| keys.iter().map(|k| row[*k].to_string()).collect::<Vec<_>>().join(" ");
    assert_eq!(
        cells(&["flavor", "resource", "reserved", "admitted", "nominal", "percent"]),
        format!("\"{flavor}\" \"cpu\" \"10\" \"10\" \"10\" 100"),
        "{queue:#}"
    );

    let sweep = held(&c, &ns, "sweep").await;
    assert_eq!(sweep.1, "Inadmissible", "{sweep:?}");
    assert_eq!(said(2), ("inadmissible".to_string(), sweep.2.clone()), "job sweep: check and Kueue differ");

    // 2 pods of 6 cpu: more than the flavor ever holds.
    let huge = held(&c, &ns, "huge").await;
    assert_eq!(huge.1, "Pending", "{huge:?}");
    assert!(huge.2.contains("> maximum capacity (10)"), "{huge:?}");
    assert_eq!(said(3), ("pending".to_string(), huge.2.clone()), "job huge: check and Kueue differ");

    // blocked lists the Job Kueue admitted whose pods quota refuses, in the server's words,
    // and the three Jobs Kueue holds, each in the words of its Workload.
    let out = plugin_stdin(&kubeconfig, &["blocked", "-n", &ns, "-o", "json"], "");
    let blocked: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("blocked: {e}: {}", text(&out.stderr)));
    let mut listed: Vec<(String, String, String)> = blocked["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["workload"].as_str().unwrap_or_default().into(),
                b["blocker"].as_str().unwrap_or_default().into(),
                b["message"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    listed.sort();
    assert_eq!(listed.first().map(|e| (e.0.as_str(), e.1.as_str())), Some(("job/eval", "quota")), "{blocked:#}");
    assert!(listed[0].2.ends_with(predicted), "job eval: blocked says {:?}, check {predicted:?}", listed[0].2);
    let kueue = |job: &str, held: &(String, String, String)| (format!("job/{job}"), "Kueue".to_string(), held.2.clone());
    assert_eq!(listed[1..], [kueue("huge", &huge), kueue("sweep", &sweep), kueue("train", &train)], "{blocked:#}");
    assert!(blocked["blocked"].as_array().unwrap().iter().any(|b| b["fix"].as_str().is_some_and(|f| f.contains("needs 1 more cpu"))), "{blocked:#}");

    drop_namespace(&c, &ns).await;
}

/// A cohort: ClusterQueue `team` (4 cpu, all reserved) borrows from `lender` (6 cpu, 2
/// reserved, lending at most 3) within cohort `org`; then `team` with a borrowing limit of 1.
/// check's answer for each Job, in order, is what Kueue does with it: admitted by borrowing,
/// waiting for the quota the cohort lacks, never fitting past what the cohort can ever lend.
#[tokio::test(flavor = "multi_thread")]
async fn check_says_what_kueue_does_within_a_cohort() {
    let Some(kubeconfig) = lab() else { return };
    if controller_dir("KUBECTL_QUOTA_KUEUE", "Kueue", "tests/cluster/kueue.sh").is_none() {
        return;
    }
    let c = client(&kubeconfig).await;
    for (tag, borrowing, jobs) in [
        // Lent: 3 of lender's 6 (its other 3 are its own); 3 - (2 - 3 → 0) = 3 free in the cohort.
        ("free", "", vec![("two", "2", "admitted"), ("five", "5", "pending"), ("eight", "8", "pending")]),
        // At most 1 borrowed: 1 free for team; at most 4 + 1 ever.
        ("limited", ", borrowingLimit: '1'", vec![("two", "2", "pending"), ("six", "6", "pending"), ("one", "1", "admitted")]),
    ] {
        let ns = new_namespace(&c, &format!("kq-cohort-{tag}")).await;
        let (flavor, team, lender, cohort) = (format!("{ns}-default"), format!("{ns}-team"), format!("{ns}-lender"), format!("{ns}-org"));
        let kind = |k: &str, p: &str| ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta2", k), p);
        let _unregister = Unregister::default()
            .and_dynamic(&c, &kind("ClusterQueue", "clusterqueues"), &team)
            .and_dynamic(&c, &kind("ClusterQueue", "clusterqueues"), &lender)
            .and_dynamic(&c, &kind("ResourceFlavor", "resourceflavors"), &flavor);
        let cq = |name: &str, quota: &str| {
            format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: {cohort}\n  namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}\n  resourceGroups: [{{coveredResources: [cpu], flavors: [{{name: {flavor}, resources: [{{name: cpu, {quota}}}]}}]}}]\n")
        };
        let lq =
            |name: &str, cq: &str| format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}}}\nspec: {{clusterQueue: {cq}}}\n");
        let setup = [
            format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {flavor}}}\n"),
            cq(&team, &format!("nominalQuota: '4'{borrowing}")),
            cq(&lender, "nominalQuota: '6', lendingLimit: '3'"),
            lq("team", &team),
            lq("lender", &lender),
        ]
        .join("---\n");
        apply(&c, &ns, &setup).await.unwrap();
        // What each queue runs already: team its 4, lender 2.
        for (name, queue, cpu) in [("team-running", "team", "4"), ("lender-running", "lender", "2")] {
            apply(&c, &ns, &job(name, queue, cpu, 1)).await.unwrap();
            admitted(&c, &ns, name, 90).await;
        }
        eventually("the ClusterQueues' status: 4 and 2 cpu reserved", 60, || async {
            match (cq_total(&c, &team, "flavorsReservation").await?, cq_total(&c, &lender, "flavorsReservation").await?) {
                (t, l) if t == "4" && l == "2" => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;

        let input: Vec<String> = jobs.iter().map(|(name, cpu, _)| job(name, "team", cpu, 1)).collect();
        let out = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &input.join("---\n"));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
        // Created one at a time, each answered by Kueue before the next.
        for (i, (name, _, verdict)) in jobs.iter().enumerate() {
            apply(&c, &ns, &input[i]).await.unwrap();
            let real = eventually(&format!("Kueue's answer for job {name}"), 60, || async {
                match quota_reserved(&c, &ns, name).await? {
                    r if r.0 == "True" || !r.2.is_empty() => Ok(r),
                    other => Err(format!("{other:?}")),
                }
            })
            .await;
            let d = &report["documents"][i]["kueue"];
            let said = (d["verdict"].as_str().unwrap_or_default(), d["message"].as_str().unwrap_or_default());
            if real.0 == "True" {
                assert_eq!(said.0, "admitted", "{tag}: job {name}: Kueue admitted it ({real:?}); check said {d:#}");
            } else {
                assert_eq!(said, ("pending", real.2.as_str()), "{tag}: job {name}: Kueue said {real:?}; check said {d:#}");
            }
            assert_eq!(said.0, *verdict, "{tag}: job {name}: {real:?}");
        }
        drop_namespace(&c, &ns).await;
    }
}
