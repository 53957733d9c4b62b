//! The admission webhooks a document's object and pods meet, replayed from their
//! configurations (rules, namespaceSelector, objectSelector), and said in the report: an answer
//! that passes a mutating webhook rests on what it adds, which no API shows.

mod support;

use support::*;

fn namespace(labels: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}, labels: {{{labels}}}}}\n")
}

/// Istio's injector as its chart registers it: pods, on create, in namespaces labelled for
/// injection, unless the pod opts out.
const INJECTOR: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: istio-sidecar-injector}
webhooks:
- name: namespace.sidecar-injector.istio.io
  clientConfig: {url: 'https://127.0.0.1:1/inject'}
  rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {istio-injection: enabled}}
  objectSelector: {matchExpressions: [{key: sidecar.istio.io/inject, operator: NotIn, values: ['false']}]}
  sideEffects: None
  admissionReviewVersions: [v1]
";

const POLICY: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: gatekeeper}
webhooks:
- name: validation.gatekeeper.sh
  clientConfig: {url: 'https://127.0.0.1:1/v1/admit'}
  rules: [{operations: [CREATE, UPDATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]
  matchConditions: [{name: not-system, expression: 'true'}]
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
";

const VPA_WEBHOOK: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: vpa-webhook-config}
webhooks:
- name: vpa.k8s.io
  clientConfig: {url: 'https://127.0.0.1:1/'}
  rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
";

fn web(pod_labels: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec: {{replicas: 2, selector: {{matchLabels: {{app: web}}}}, template: {{metadata: {{labels: {{app: web, {pod_labels}}}}}, spec: {}}}}}\n",
        pod("web").app("app", "requests: {cpu: 100m}").spec()
    )
}

#[test]
fn the_webhooks_a_workload_and_its_pods_meet_are_named() {
    let rows: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "the injector sees the pods of a namespace labelled for it",
            cluster(&[namespace("istio-injection: enabled"), INJECTOR.into()]),
            web("tier: front"),
            vec!["namespace.sidecar-injector.istio.io its pods"],
        ),
        ("not in a namespace without the label", cluster(&[namespace("team: a"), INJECTOR.into()]), web("tier: front"), vec![]),
        ("not for pods that opt out", cluster(&[namespace("istio-injection: enabled"), INJECTOR.into()]), web("sidecar.istio.io/inject: 'false'"), vec![]),
        (
            "a validating webhook on every resource sees the Deployment and its pods",
            cluster(&[namespace("team: a"), POLICY.into()]),
            web("tier: front"),
            vec!["validation.gatekeeper.sh the object", "validation.gatekeeper.sh its pods"],
        ),
        ("the VPA's webhook is replayed, not named", cluster(&[namespace("team: a"), VPA_WEBHOOK.into()]), web("tier: front"), vec![]),
        ("a state without webhook configurations names none", cluster(&[namespace("istio-injection: enabled")]), web("tier: front"), vec![]),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let d = check_one(&state, &input);
        let got: Vec<String> = d.webhooks.iter().map(|w| format!("{} {}", w.webhook, w.sees)).collect();
        t.row(what, format!("{got:?}"), format!("{want:?}"));
    }
    t.done();
}

#[test]
fn the_report_says_the_answer_rests_on_a_mutating_webhook() {
    let d = check_one(&cluster(&[namespace("istio-injection: enabled"), INJECTOR.into(), POLICY.into()]), &web("tier: front"));
    let said: Vec<&String> = d.notes.iter().filter(|n| n.contains("webhook")).collect();
    assert_eq!(
        said,
        [
            "mutating webhook namespace.sidecar-injector.istio.io (istio-sidecar-injector) sees its pods: what it changes (a sidecar's requests, say) is in no API, so this answer is for its pods as written and rests on it",
            "validating webhook validation.gatekeeper.sh (gatekeeper) sees the object when its matchConditions not-system hold (not evaluated here): it may refuse what this answer admits (failurePolicy Ignore)",
            "validating webhook validation.gatekeeper.sh (gatekeeper) sees its pods when its matchConditions not-system hold (not evaluated here): it may refuse what this answer admits (failurePolicy Ignore)",
        ]
    );
}
