//! Watches for the guard's caches: one kind, every namespace, listed then watched, each object
//! decoded into the engine's objects as a LIST's items are. kube's watcher resumes a dropped
//! watch from the last resourceVersion, lists again when the server answers 410 Gone, and
//! backs off between failures; each response body is read through the shared cap.

use super::Conn;

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};
use serde::de::DeserializeOwned;

/// What a watch reports.
pub enum Change {
    /// Every object of the kind, after a (re)list: what was cached before and is not here is gone.
    Listed(Vec<Object>),
    Applied(Object),
    Deleted(Object),
    /// A failed request (the watch is retried after a back-off).
    Failed(String),
}

/// Objects kept from one (re)list at the most: past this the list is cut, and said to be.
pub const MAX_LISTED: usize = 200_000;

/// Lists, then watches, every object of kind `K` for ever, handing each change to `on`; `keep`
/// makes each object what the caller keeps of it, as it arrives (a list is held whole until it
/// ends, so that is what it holds).
pub async fn watch_objects<K>(conn: &Conn, keep: impl Fn(Object) -> Object, mut on: impl FnMut(Change))
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + serde::Serialize + std::fmt::Debug + Send + 'static,
{
    let api: Api<K> = Api::all(conn.client.clone());
    let mut stream = std::pin::pin!(watcher::watcher(api, watcher::Config::default().page_size(500)).default_backoff());
    let mut listing: Vec<Object> = Vec::new();
    let mut cut = false;
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Init) => {
                listing = Vec::new();
                cut = false;
            }
            Ok(Event::InitApply(k)) => {
                if listing.len() >= MAX_LISTED {
                    cut = true;
                } else if let Some(o) = to_object(&k) {
                    listing.push(keep(o));
                }
            }
            Ok(Event::InitDone) => {
                if cut {
                    on(Change::Failed(format!("{} {}: more than {MAX_LISTED} objects; the rest are not cached", conn.server, K::plural(&()))));
                }
                on(Change::Listed(std::mem::take(&mut listing)));
            }
            Ok(Event::Apply(k)) => {
                if let Some(o) = to_object(&k) {
                    on(Change::Applied(keep(o)));
                }
            }
            Ok(Event::Delete(k)) => {
                if let Some(o) = to_object(&k) {
                    on(Change::Deleted(o));
                }
            }
            Err(e) => on(Change::Failed(format!("{}: watch {}: {e}", conn.server, K::plural(&())))),
        }
    }
}

/// An object as the engine reads it (`None`: one the engine cannot read, left out).
fn to_object<K: kube::Resource<DynamicType = ()> + serde::Serialize>(k: &K) -> Option<Object> {
    let mut v = serde_json::to_value(k).ok()?;
    if let Some(m) = v.get_mut("metadata").and_then(serde_json::Value::as_object_mut) {
        m.remove("managedFields");
    }
    v["apiVersion"] = K::api_version(&()).as_ref().into();
    v["kind"] = K::kind(&()).as_ref().into();
    objects::decode(&Document { origin: Origin::new("cluster", 1), value: v }).ok()
}
