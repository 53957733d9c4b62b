//! Watches for the guard's caches: one kind, every namespace, listed then watched, each object
//! decoded into the engine's objects as a LIST's items are. kube's watcher resumes a dropped
//! watch from the last resourceVersion, lists again when the server answers 410 Gone, and
//! backs off between failures; each response body is read through the shared cap.

use super::Conn;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};
use serde::de::DeserializeOwned;

/// What a watch reports.
pub enum Change {
    /// A (re)list begins: the objects [`Change::Listed`] hands over until [`Change::ListEnd`]
    /// replace every object of the kind (what is not among them is gone).
    ListBegin,
    Listed(Object),
    ListEnd,
    Applied(Object),
    Deleted(Object),
    /// A failed request (the watch is retried after a back-off).
    Failed(String),
}

/// Objects handed over from one (re)list at the most: past this the list is cut, and said to be.
pub const MAX_LISTED: usize = 200_000;

/// Lists, then watches, every object of a kind (named by its apiVersion, kind and plural)
/// for ever, handing each change to `on` as it arrives (nothing of a list is held here);
/// `keep` makes each object what the caller keeps.
pub async fn watch_kind(conn: &Conn, api_version: &str, kind: &str, plural: &str, keep: impl Fn(Object) -> Object, on: impl FnMut(Change)) {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &ar);
    watch_with(conn, api, plural, |k: &DynamicObject| to_object(k, api_version, kind), keep, on).await
}

async fn watch_with<K>(
    conn: &Conn,
    api: Api<K>,
    plural: &str,
    decode: impl Fn(&K) -> Option<Object>,
    keep: impl Fn(Object) -> Object,
    mut on: impl FnMut(Change),
) where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let mut stream = std::pin::pin!(watcher::watcher(api, watcher::Config::default().page_size(100)).default_backoff());
    let mut listed = 0;
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Init) => {
                listed = 0;
                on(Change::ListBegin);
            }
            Ok(Event::InitApply(k)) => {
                listed += 1;
                if listed <= MAX_LISTED {
                    if let Some(o) = decode(&k) {
                        on(Change::Listed(keep(o)));
                    }
                }
            }
            Ok(Event::InitDone) => {
                if listed > MAX_LISTED {
                    on(Change::Failed(format!("{} {plural}: more than {MAX_LISTED} objects; the rest are not cached", conn.server)));
                }
                on(Change::ListEnd);
            }
            Ok(Event::Apply(k)) => {
                if let Some(o) = decode(&k) {
                    on(Change::Applied(keep(o)));
                }
            }
            Ok(Event::Delete(k)) => {
                if let Some(o) = decode(&k) {
                    on(Change::Deleted(o));
                }
            }
            Err(e) => on(Change::Failed(format!("{}: watch {plural}: {e}", conn.server))),
        }
    }
}

/// An object as the engine reads it (`None`: one the engine cannot read, left out).
fn to_object<K: serde::Serialize>(k: &K, api_version: &str, kind: &str) -> Option<Object> {
    let mut v = serde_json::to_value(k).ok()?;
    if let Some(m) = v.get_mut("metadata").and_then(serde_json::Value::as_object_mut) {
        m.remove("managedFields");
    }
    v["apiVersion"] = api_version.into();
    v["kind"] = kind.into();
    let doc = Document { origin: Origin::new("cluster", 1), value: v };
    let mut o = objects::decode(&doc).ok()?;
    // Kueue's objects are read whole, as a LIST's.
    objects::keep_source(&mut o, doc.value, false);
    Some(o)
}
