//! The real autoscalers scaling a Deployment into a quota, on the lab: the HPA controller of
//! kube-controller-manager (every release), KEDA's operator and metrics server with the cron
//! scaler (tests/cluster/keda.sh; 1.23+, so the 1.37 lab), the VPA admission controller
//! (tests/cluster/vpa.sh). Each test pins what the controllers do, in the quota's words, for the
//! answers of `check`, `why` and the guard to be compared with (tests/common/autoscalers.rs sets
//! the scenarios up and observes them).
//!
//! Quota `compute`: requests.cpu=4, limits.cpu=8, pods=10; pods of 500m/1 cpu: 8 fit.

mod common;

use common::autoscalers::{self as scen, Observed};
use common::live::{client, lab, lab_version, new_namespace, plugin, plugin_stdin, text};
use serde_json::json;

fn describe(seen: &Observed) -> String {
    format!(
        "{} pods {:?}; deployment replicas {:?}; FailedCreate: {:?}",
        seen.pods.len(),
        seen.pods.iter().map(|p| (&p.requests_cpu, &p.limits_cpu)).collect::<Vec<_>>(),
        seen.deployment_replicas,
        seen.failed_create.iter().take(2).collect::<Vec<_>>()
    )
}

/// (a) The HPA controller raises `web` from 5 to minReplicas 12 with no metric at all; quota lets
/// 8 pods be created and the ReplicaSet's FailedCreate events carry the quota's words.
#[tokio::test(flavor = "multi_thread")]
async fn hpa_controller_raises_a_deployment_to_min_replicas_into_the_quota() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-auto-hpa").await;
    let version = scen::hpa_api_version(lab_version().minor);
    // Before the HPA: web runs 5 pods, and check of the HPA says what the controller will do.
    scen::quota_ready(&c, &ns).await.unwrap();
    scen::create(&c, &ns, &scen::deployment(5)).await.unwrap();
    common::live::eventually("web's 5 pods", 60, || async {
        let seen = scen::observe(&c, &ns).await;
        if seen.pods.len() == 5 {
            Ok(())
        } else {
            Err(describe(&seen))
        }
    })
    .await;
    scen::status_counts(&c, &ns, 5, 60).await;
    let hpa = scen::hpa(version, scen::DEPLOYMENT, 12, 20);
    let before = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &hpa.to_string());
    let report: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap_or_else(|e| panic!("check: {e}: {}", text(&before.stderr)));
    let d = &report["documents"][0];
    assert_eq!(before.status.code(), Some(1), "{d}");
    assert_eq!((d["replicas"].as_i64(), d["replicasExisting"].as_i64(), d["replicasAdmitted"].as_i64()), (Some(12), Some(5), Some(8)), "{d}");
    assert_eq!(d["autoscaling"]["fits"].as_i64(), Some(8), "{d}");
    let predicted = d["podMessage"].as_str().unwrap_or_default().to_string();
    scen::create(&c, &ns, &hpa).await.unwrap();

    let seen = scen::settle(&c, &ns, 8, 120).await;
    // What check said is what the controllers then met, word for word.
    assert!(seen.quota_refusals().contains(&predicted), "check predicted {predicted:?}: {}", describe(&seen));
    let out = plugin(&kubeconfig, &["why", "deployment/web", "-n", &ns, "-o", "json"]);
    let why: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("why: {e}: {}", text(&out.stderr)));
    assert_eq!(why["autoscaler"], json!("HPA web wants 12, 8 exist: quota compute refuses the rest"), "{why}");
    // blocked names the HPA in the same words (from the HPAs it lists beside the controllers).
    let out = plugin(&kubeconfig, &["blocked", "-n", &ns, "-o", "json"]);
    let blocked: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("blocked: {e}: {}", text(&out.stderr)));
    assert_eq!(blocked["blocked"][0]["autoscaler"], json!("HPA web wants 12, 8 exist: quota compute refuses the rest"), "{blocked}");
    // capacity: at its maximum of 20 the HPA may ask for 12 more pods (6 cpu requested), and
    // compute has no room left: the namespace where a spike hits quota.
    let out = plugin(&kubeconfig, &["capacity", "-n", &ns, "-o", "json"]);
    let cap: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("capacity: {e}: {}", text(&out.stderr)));
    let h = &cap["autoscalers"][0];
    assert_eq!(h["autoscalers"], json!([{"autoscaler": "HPA web", "target": "deployment/web", "current": 8, "maxReplicas": 20}]), "{cap}");
    let row = h["resources"].as_array().and_then(|r| r.iter().find(|x| x["resource"] == "requests.cpu")).cloned().unwrap_or_default();
    assert_eq!(row, json!({"resource": "requests.cpu", "mayAsk": "6", "room": "0", "quota": "compute", "short": "6"}), "{cap}");
    assert_eq!(seen.deployment_replicas, Some(12), "the HPA ({version}) did not raise the Deployment to minReplicas: {}", describe(&seen));
    assert_eq!(seen.pods.len(), 8, "{}", describe(&seen));
    let refusals = seen.quota_refusals();
    assert!(
        refusals.iter().any(|m| m.starts_with(
            "exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4"
        )),
        "no FailedCreate in the quota's words: {}",
        describe(&seen)
    );
    assert_eq!(scen::hpa_desired(&c, &ns, scen::DEPLOYMENT).await, Some(12), "the HPA's desired count");
    let _ = c; // the namespace stays for inspection; the lab is thrown away after the run
}

/// (b) KEDA's cron scaler asks for 12 replicas of `web` (minReplicaCount 1): the operator creates
/// HPA `keda-hpa-web`, whose metric (from KEDA's metrics server, through the API server's
/// aggregation layer) raises the Deployment to 12; quota lets 8 be created.
#[tokio::test(flavor = "multi_thread")]
async fn keda_cron_scaled_object_raises_a_deployment_into_the_quota() {
    let Some(kubeconfig) = lab() else { return };
    let Some(keda) = scen::controller_dir("KUBECTL_QUOTA_KEDA", "KEDA", "tests/cluster/keda.sh") else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-auto-keda").await;
    scen::setup_keda(&c, &ns, 1, 20, 12).await.unwrap();

    let hpa = common::live::eventually("KEDA's HPA keda-hpa-web", 60, || async {
        match scen::get(&c, &ns, "autoscaling/v2", "HorizontalPodAutoscaler", "keda-hpa-web").await {
            Ok(Some(h)) => Ok(h),
            Ok(None) => Err(format!("not yet; operator log:\n{}", scen::log_tail(&keda, "keda-operator.log", 5))),
            Err(e) => Err(e),
        }
    })
    .await;
    assert_eq!(hpa["spec"]["minReplicas"], json!(1));
    assert_eq!(hpa["spec"]["maxReplicas"], json!(20));
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], json!("web"));

    let seen = scen::settle(&c, &ns, 8, 150).await;
    let logs = || {
        format!("\noperator:\n{}\nmetrics server:\n{}", scen::log_tail(&keda, "keda-operator.log", 15), scen::log_tail(&keda, "keda-metrics-apiserver.log", 15))
    };
    assert_eq!(seen.deployment_replicas, Some(12), "keda-hpa-web did not raise the Deployment to the cron's 12: {}{}", describe(&seen), logs());
    assert_eq!(seen.pods.len(), 8, "{}{}", describe(&seen), logs());
    assert!(
        seen.quota_refusals().iter().any(|m| m.starts_with("exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m,")),
        "no FailedCreate in the quota's words: {}",
        describe(&seen)
    );
    assert_eq!(scen::hpa_desired(&c, &ns, "keda-hpa-web").await, Some(12), "keda-hpa-web's desired count");
    // why names the ScaledObject (keda-hpa-web is the same autoscaler, never a second one).
    let out = plugin(&kubeconfig, &["why", "deployment/web", "-n", &ns, "-o", "json"]);
    let why: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("why: {e}: {}", text(&out.stderr)));
    assert_eq!(why["autoscaler"], json!("ScaledObject web wants 12, 8 exist: quota compute refuses the rest"), "{why}");
}

/// (c) A VPA in mode Initial on `web`, its recommendation (cpu 1) written through the status
/// subresource as the recommender would: the pods the ReplicaSet controller creates through the
/// real webhook ask for 1 cpu, limited to 2 (the template's 1:2 kept), and quota lets 4 of the 6
/// be created, though 6 pods at the template's 500m would fit.
#[tokio::test(flavor = "multi_thread")]
async fn vpa_webhook_sets_new_pods_requests_and_quota_refuses_those_that_do_not_fit() {
    let Some(kubeconfig) = lab() else { return };
    let Some(vpa) = scen::controller_dir("KUBECTL_QUOTA_VPA", "the VPA admission controller", "tests/cluster/vpa.sh") else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-auto-vpa").await;
    if let Err(e) = scen::setup_vpa(&c, &ns, "Initial", &json!({"cpu": "1"})).await {
        panic!("{e}\nadmission controller:\n{}", scen::log_tail(&vpa, "vpa-admission-controller.log", 20));
    }
    // Before the scale-up, check of the Deployment at 6 replicas reads the VPA and replays its
    // webhook: 4 pods fit at the target, and the refusal the ReplicaSet will meet.
    let before = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &scen::deployment(6).to_string());
    let report: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap_or_else(|e| panic!("check: {e}: {}", text(&before.stderr)));
    let d = &report["documents"][0];
    assert_eq!((d["replicas"].as_i64(), d["replicasAdmitted"].as_i64()), (Some(6), Some(4)), "{d}");
    let predicted = d["podMessage"].as_str().unwrap_or_default().to_string();
    scen::scale(&c, &ns, 6).await.unwrap();

    let seen = scen::settle(&c, &ns, 4, 120).await;
    assert!(seen.quota_refusals().contains(&predicted), "check predicted {predicted:?}: {}", describe(&seen));
    assert_eq!(seen.pods.len(), 4, "{}", describe(&seen));
    for p in &seen.pods {
        assert_eq!((p.requests_cpu.as_deref(), p.limits_cpu.as_deref()), (Some("1"), Some("2")), "pod {} was not created at the VPA's target", p.name);
    }
    assert!(
        seen.quota_refusals().iter().any(|m| m.starts_with(
            "exceeded quota: compute, requested: limits.cpu=2,requests.cpu=1, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4"
        )),
        "no FailedCreate in the quota's words at the VPA's target: {}",
        describe(&seen)
    );
    let out = plugin(&kubeconfig, &["why", "deployment/web", "-n", &ns, "-o", "json"]);
    let why: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("why: {e}: {}", text(&out.stderr)));
    assert_eq!(why["vpa"], json!("VPA web sets new pods to its target (app: cpu=1): at that size quota compute refuses the rest"), "{why}");
}

/// (d) A VPA in mode Recreate whose target (1200m) outgrows the quota's room, on `web` running 5
/// pods of 500m: `check` of the VPA says 3 of the 5 come back at the target. The test then does
/// what the updater does (evicts the pods); the real ReplicaSet controller creates them again
/// through the real webhook, and quota lets 3 back.
#[tokio::test(flavor = "multi_thread")]
async fn vpa_recreated_pods_come_back_only_as_far_as_quota_lets_them() {
    let Some(kubeconfig) = lab() else { return };
    let Some(vpa) = scen::controller_dir("KUBECTL_QUOTA_VPA", "the VPA admission controller", "tests/cluster/vpa.sh") else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-auto-vpa-rc").await;
    scen::quota_ready(&c, &ns).await.unwrap();
    scen::create(&c, &ns, &scen::deployment(5)).await.unwrap();
    scen::settle(&c, &ns, 5, 90).await;
    scen::status_counts(&c, &ns, 5, 60).await;
    if let Err(e) = scen::vpa_on(&c, &ns, "Recreate", &json!({"cpu": "1200m"})).await {
        panic!("{e}\nadmission controller:\n{}", scen::log_tail(&vpa, "vpa-admission-controller.log", 20));
    }
    let vpa_doc = scen::get(&c, &ns, "autoscaling.k8s.io/v1", "VerticalPodAutoscaler", scen::DEPLOYMENT).await.unwrap().expect("the VPA");
    let before = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &vpa_doc.to_string());
    let report: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap_or_else(|e| panic!("check: {e}: {}", text(&before.stderr)));
    let v = &report["documents"][0]["vpa"];
    assert_eq!((v["pods"].as_i64(), v["fits"].as_i64(), v["quota"].as_str()), (Some(5), Some(3), Some("compute")), "{report}");
    let predicted = v["message"].as_str().unwrap_or_default().to_string();

    let pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), &ns);
    for p in scen::observe(&c, &ns).await.pods {
        pods.delete(&p.name, &Default::default()).await.unwrap();
    }
    let seen = scen::settle(&c, &ns, 3, 120).await;
    assert_eq!(seen.pods.len(), 3, "{}", describe(&seen));
    for p in &seen.pods {
        assert_eq!(p.requests_cpu.as_deref(), Some("1200m"), "pod {} did not come back at the VPA's target", p.name);
    }
    let first = predicted.split(", used:").next().unwrap_or_default().to_string();
    assert!(seen.quota_refusals().iter().any(|m| m.starts_with(&first)), "check predicted {predicted:?}: {}", describe(&seen));
}
