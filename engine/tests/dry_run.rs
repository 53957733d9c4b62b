//! A live check's dry run of the pods mutating webhooks see (`check::dry_run`): what the
//! server answered, taken by `check` and by `plan` (integration tests: `plan` sits above
//! `check`, which may not name it).

use kubectl_quota_engine::admission::Stage;
use kubectl_quota_engine::check::dry_run::{answer_of_refusal, DryRun, PodSource};
use kubectl_quota_engine::check::{self, ClusterState};
use kubectl_quota_engine::manifest::parse_str;
use kubectl_quota_engine::objects::{decode, Object};

/// The server refusing the dry run is the answer for every replica; plan, which opens the
/// quotas, takes a quota's refusal as no answer and sizes the pods as written.
#[test]
fn a_refused_dry_run_refuses_every_replica_and_plan_takes_the_pods_as_written() {
    let state_text = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ns}\nspec: {hard: {requests.cpu: '250m'}}\nstatus: {hard: {requests.cpu: '250m'}, used: {requests.cpu: '0'}}\n";
    let objects = |file: &str, text: &str| -> Vec<Object> { parse_str(file, text).unwrap().iter().map(|d| decode(d).unwrap()).collect() };
    let shop = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: shop}}\n  template:\n    metadata: {labels: {app: shop}}\n    spec: {containers: [{name: app, image: x, resources: {requests: {cpu: 200m}}}]}\n";
    let source: PodSource = ("shop.yaml".into(), 1, None);
    let opts = check::CheckOptions { namespace: "ns".into(), ..Default::default() };
    for (code, message, stage) in [
        (400, "admission webhook \"sidecar.kq.test\" denied the request: no", Stage::MutatingAdmissionWebhook),
        (
            403,
            "pods \"shop-x\" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=0, limited: requests.cpu=250m",
            Stage::ResourceQuota,
        ),
    ] {
        let mut state = ClusterState::from_objects(objects("state.yaml", state_text), "ns");
        let answer = answer_of_refusal(code, message);
        state.dry_runs =
            std::sync::Arc::new([(source.clone(), DryRun { answer, webhooks: vec!["sidecar.kq.test (injector)".into()], stood_in: vec![] })].into());
        let plan = kubectl_quota_engine::plan::plan(&state, objects("shop.yaml", shop), &opts);
        let report = check::check(&mut state, objects("shop.yaml", shop), &opts);
        let d = &report.documents[0];
        assert_eq!((d.replicas_admitted, d.pod_refuser), (Some(0), Some(stage)), "{d:#?}");
        assert!(message.ends_with(d.pod_message.as_deref().unwrap()), "{d:#?}");
        // plan: a webhook's refusal stands; quota's says nothing of the pod (4 × 200m).
        let planned = plan.notes.iter().any(|n| n.contains("quota refused a dry run of them"));
        assert_eq!(planned, stage == Stage::ResourceQuota, "{:#?}", plan.notes);
    }
}
