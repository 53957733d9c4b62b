//! The API server asked for the pods a mutating webhook sees: each distinct Pod POSTed once with
//! `?dryRun=All` (the whole admission chain runs, webhooks included; nothing is stored), all at
//! once. Which pods, and what the answers mean, are the engine's (`check::dry_run`). `check`
//! and `plan` ask for a whole input at once ([`dry_runs`]); the guard asks for one workload's
//! pod at a time, under its own short deadline ([`dry_run_pod`]): both through [`ask`].

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kubectl_quota_engine::admission::policy::PolicySet;
use kubectl_quota_engine::admission::{ServerAnswer, StandIn};
use kubectl_quota_engine::check::dry_run::{
    answer_of_refusal, dry_runs_needed, pod_without, refused_for_input, unless_the_input_decides, with_input_defaults, DryRun, PodSource,
};
use kubectl_quota_engine::check::ClusterState;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Body, Object};

use super::errors::{transport_message, within, RequestError};
use super::{Bound, Conn};
use crate::input::PodsToSend;

/// A document a dry run answers, and the webhooks that see its pods.
type Answered = (PodSource, Vec<String>);

/// Dry runs in flight at once.
const IN_FLIGHT: usize = 16;

/// Asks the server for the pods of `objs` that a mutating webhook sees (as `state` has the
/// webhooks, namespaces and existing objects), one request per distinct pod, and puts the
/// answers in `state.dry_runs`. No webhook sees them: no request.
pub async fn dry_runs(conn: &Conn, state: &mut ClusterState, objs: &[Object], pods: &PodsToSend) {
    let asks = dry_runs_needed(state, objs, &conn.namespace);
    // One request per (namespace, pod): the documents (and their webhooks) it answers.
    let mut distinct: BTreeMap<(&str, &str), Vec<Answered>> = BTreeMap::new();
    for a in &asks {
        if let Some(json) = pods.get(&a.source) {
            distinct.entry((a.namespace.as_str(), json.as_str())).or_default().push((a.source.clone(), a.webhooks.clone()));
        }
    }
    if distinct.is_empty() {
        return;
    }
    let policies = state.policies.clone();
    let policies = policies.as_deref();
    let answers: Vec<_> = futures::stream::iter(distinct)
        .map(|((ns, json), docs)| async move { (ask_standing_in(conn, ns, json, objs, policies).await, docs) })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let mut out = BTreeMap::new();
    for ((answer, stood_in), docs) in answers {
        for (source, webhooks) in docs {
            out.insert(source, DryRun { answer: answer.clone(), webhooks, stood_in: stood_in.clone() });
        }
    }
    state.dry_runs = Arc::new(out);
}

/// A dry run of the pod `json` in `ns`, asked again without what the server refused it for
/// lacking where `objs` (the input) creates that first: its ServiceAccount, PriorityClass or
/// RuntimeClass, which the server does not hold yet; and sent with the defaults the input's
/// LimitRanges of `ns` give, which the server would give it before its webhooks once they
/// are stored. The dry run is for what the webhooks add; what the input itself provides stays
/// the engine's, in input order: a refusal by a quota, a policy or params the input creates
/// or changes (the server's `policies` say which params) is no answer (the input's decide).
/// A refusal for anything else is the answer.
async fn ask_standing_in(conn: &Conn, ns: &str, json: &str, objs: &[Object], policies: Option<&PolicySet>) -> (Result<ServerAnswer, String>, Vec<StandIn>) {
    let Ok(pod) = serde_json::from_str::<serde_json::Value>(json) else { return (ask(conn, ns, json, conn.timeout).await.answer, vec![]) };
    let (mut pod, mut stood_in) = with_input_defaults(&pod, ns, objs, &conn.namespace);
    let mut answer = ask(conn, ns, &pod.to_string(), conn.timeout).await.answer;
    while let Ok(ServerAnswer::Refused(d)) = &answer {
        let message = d.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
        let Some(s) = refused_for_input(message, ns, objs, &conn.namespace).filter(|s| !stood_in.contains(s)) else { break };
        pod = pod_without(&pod, &s);
        stood_in.push(s);
        answer = ask(conn, ns, &pod.to_string(), conn.timeout).await.answer;
    }
    (unless_the_input_decides(answer, ns, objs, policies, &conn.namespace), stood_in)
}

/// One dry run's outcome: the answer, and whether the lack of one may pass (the server did
/// not answer in time, or could not be reached), so that it is worth asking again.
pub struct Asked {
    pub answer: Result<ServerAnswer, String>,
    pub transient: bool,
}

/// One dry run of the pod `json` in namespace `ns`, for the guard: within `deadline`.
pub async fn dry_run_pod(conn: &Conn, ns: &str, json: &str, deadline: std::time::Duration) -> Asked {
    ask(conn, ns, json, Bound::PerRequest(deadline)).await
}

/// One dry run: the pod the server returns, its refusal, or why there is no answer; the
/// request bounded by `bound`.
async fn ask(conn: &Conn, ns: &str, json: &str, bound: Bound) -> Asked {
    let settled = |answer| Asked { answer, transient: false };
    let pod: DynamicObject = match serde_json::from_str(json) {
        Ok(p) => p,
        Err(e) => return settled(Err(format!("the pod could not be sent for a dry run: {e}"))),
    };
    let ar = ApiResource { group: String::new(), version: "v1".into(), api_version: "v1".into(), kind: "Pod".into(), plural: "pods".into() };
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), ns, &ar);
    let pp = PostParams { dry_run: true, field_manager: Some("kubectl-quota".into()) };
    match within(bound, api.create(&pp, &pod)).await {
        Ok(returned) => {
            let value = match serde_json::to_value(&returned) {
                Ok(v) => v,
                Err(e) => return settled(Err(e.to_string())),
            };
            let doc = Document { origin: Origin::new("the API server's dry run", 1), value };
            settled(
                match objects::decode(&doc).map(|mut o| {
                    // The whole spec kept, for the ValidatingAdmissionPolicies that read it next.
                    objects::keep_source(&mut o, doc.value, true);
                    o
                }) {
                    Ok(Object { body: Body::Pod(p), .. }) => Ok(ServerAnswer::Admitted(Box::new(p))),
                    Ok(_) => Err("the API server's dry run returned no Pod, so its pods are taken as written".into()),
                    Err(e) => Err(format!("the pod the API server returned from a dry run could not be read ({e}), so its pods are taken as written")),
                },
            )
        }
        Err(RequestError::Kube(kube::Error::Api(s))) => settled(answer_of_refusal(s.code, &s.message)),
        Err(e) => Asked {
            answer: Err(format!("the API server did not answer a dry run of them, so its pods are taken as written: {}", transport_message(&conn.server, &e))),
            transient: true,
        },
    }
}
