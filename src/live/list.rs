//! Paginated LISTs, guarded against servers that never end them, decoded page by page into
//! the engine's objects.

use super::errors::{read_error, within, ReadError, RequestError};
use super::Conn;
use kubectl_quota_engine::check::cluster_kinds::ClusterKind;

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::api::{Api, ListParams};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};
use serde::de::DeserializeOwned;

/// Objects per LIST page: 500, or `KUBECTL_QUOTA_PAGE_SIZE` (tests use a small page to
/// exercise continue tokens).
fn page_size() -> u32 {
    std::env::var("KUBECTL_QUOTA_PAGE_SIZE").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(500)
}

/// Pages of one LIST beyond which it is taken never to end: 10 million objects at the
/// default 500 a page, far beyond any cluster.
const MAX_PAGES: usize = 20_000;
/// Pages in a row with no item that still ask for more, beyond which a LIST is taken never
/// to end.
const MAX_EMPTY_PAGES: usize = 64;

/// Guards one paginated LIST against a server (or proxy) that would never end it: a continue
/// token it gave before, pages in a row with nothing in them, or more pages than any real list
/// has. `--request-timeout` bounds each page; this bounds them all.
#[derive(Default)]
struct Pages {
    /// Hashes of the tokens given so far (a token can be large; its hash is 8 bytes).
    tokens: std::collections::HashSet<u64>,
    pages: usize,
    empty: usize,
}

impl Pages {
    /// Takes the continue token a page gave: `Err` says why the list would never end.
    fn token(&mut self, server: &str, token: &str) -> Result<(), String> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        token.hash(&mut h);
        self.pages += 1;
        if !self.tokens.insert(h.finish()) {
            return Err(format!("{server} gave page {} the continue token of an earlier page: the list would never end", self.pages));
        }
        if self.pages >= MAX_PAGES {
            return Err(format!("{server} still had more after {MAX_PAGES} pages: the list is taken never to end"));
        }
        Ok(())
    }

    /// Takes the number of items of a page that asks for more.
    fn items(&mut self, server: &str, n: usize) -> Result<(), String> {
        self.empty = if n == 0 { self.empty + 1 } else { 0 };
        if self.empty > MAX_EMPTY_PAGES {
            return Err(format!("{server} gave {} pages in a row with no item, each asking for more: the list would never end", self.empty));
        }
        Ok(())
    }
}

/// Lists every object, a page at a time.
pub async fn list_all<K>(api: Api<K>, what: String, server: String, timeout: super::Bound) -> Result<Vec<K>, ReadError>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut lp = ListParams::default().limit(page_size());
    let mut out = Vec::new();
    let mut pages = Pages::default();
    let endless = |message: String| ReadError { what: what.clone(), forbidden: false, unreachable: true, message };
    loop {
        let page = within(timeout, api.list(&lp)).await.map_err(|e| read_error(&server, what.clone(), e))?;
        let n = page.items.len();
        out.extend(page.items);
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => {
                pages.token(&server, &c).and_then(|()| pages.items(&server, n)).map_err(endless)?;
                lp = lp.continue_token(&c);
            }
            _ => break,
        }
    }
    Ok(out)
}

/// One LIST page as read by [`list_objects`]: the items as JSON without
/// `metadata.managedFields` (server bookkeeping nothing here reads, often most of an item's
/// bytes), and the continue token.
struct SlimPage {
    items: Vec<serde_json::Map<String, serde_json::Value>>,
    next: Option<String>,
}

/// An object (a map) in which the key `skip` is dropped unread; under the key
/// `nested`, the same with `nested_skip`.
struct Slim {
    skip: Option<&'static str>,
    nested: Option<(&'static str, &'static str)>,
}
impl<'de> serde::de::DeserializeSeed<'de> for Slim {
    type Value = serde_json::Map<String, serde_json::Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}
impl<'de> serde::de::Visitor<'de> for Slim {
    type Value = serde_json::Map<String, serde_json::Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = m.next_key::<String>()? {
            if self.skip == Some(k.as_str()) {
                m.next_value::<serde::de::IgnoredAny>()?;
            } else if let Some((_, skip)) = self.nested.filter(|(key, _)| *key == k) {
                out.insert(k, serde_json::Value::Object(m.next_value_seed(Slim { skip: Some(skip), nested: None })?));
            } else {
                out.insert(k, m.next_value()?);
            }
        }
        Ok(out)
    }
}
/// A page's items, each a [`Slim`] object without `metadata.managedFields`.
struct Items;
impl<'de> serde::de::DeserializeSeed<'de> for Items {
    type Value = Vec<serde_json::Map<String, serde_json::Value>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}
impl<'de> serde::de::Visitor<'de> for Items {
    type Value = Vec<serde_json::Map<String, serde_json::Value>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
        while let Some(item) = s.next_element_seed(Slim { skip: None, nested: Some(("metadata", "managedFields")) })? {
            out.push(item);
        }
        Ok(out)
    }
}

impl<'de> serde::Deserialize<'de> for SlimPage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, Visitor};
        use std::fmt;

        #[derive(serde::Deserialize, Default)]
        struct ListMeta {
            #[serde(rename = "continue")]
            next: Option<String>,
        }
        struct PageVisitor;
        impl<'de> Visitor<'de> for PageVisitor {
            type Value = SlimPage;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<SlimPage, A::Error> {
                let mut page = SlimPage { items: Vec::new(), next: None };
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "items" => page.items = m.next_value_seed(Items)?,
                        "metadata" => page.next = m.next_value::<Option<ListMeta>>()?.unwrap_or_default().next,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(page)
            }
        }
        d.deserialize_map(PageVisitor)
    }
}

/// Lists every object of `K` (in `namespace`, or all), a page at a time, straight into library
/// objects through the file decoder (see [`for_each_object`]).
pub async fn list_objects<K>(conn: &Conn, namespace: Option<&str>, what: String) -> Result<Vec<Object>, ReadError>
where
    K: kube::Resource<DynamicType = ()>,
{
    let mut out = Vec::new();
    for_each_object::<K>(conn, namespace, what, |o| out.push(o)).await?;
    Ok(out)
}

/// Hands every object of `K` (in `namespace`, or all) to `each`, decoded by the file decoder.
/// Each page is read as plain JSON without managedFields and decoded before the next is
/// requested, so neither the API types nor the whole list is ever held. Objects are numbered
/// in list order, as documents of the source `cluster`; items that do not decode are skipped.
pub async fn for_each_object<K>(conn: &Conn, namespace: Option<&str>, what: String, each: impl FnMut(Object)) -> Result<(), ReadError>
where
    K: kube::Resource<DynamicType = ()>,
{
    objects_selected::<K>(conn, namespace, None, what, each).await
}

/// Where kind `k` is listed, at the first of its versions: in namespace `ns`, or in the whole
/// cluster.
pub fn url_path(k: &ClusterKind, ns: Option<&str>) -> String {
    let base = match k.group {
        "" => format!("/api/{}", k.versions[0]),
        g => format!("/apis/{g}/{}", k.versions[0]),
    };
    match ns {
        Some(ns) if k.namespaced => format!("{base}/namespaces/{ns}/{}", k.plural),
        _ => format!("{base}/{}", k.plural),
    }
}

/// Every object the LIST at `url_path` returns, as `api_version` `kind` (a kind this program
/// has no API type for: KEDA's), decoded by the file decoder.
pub async fn objects_at(conn: &Conn, url_path: String, api_version: &str, kind: &str, what: String) -> Result<Vec<Object>, ReadError> {
    let mut out = Vec::new();
    let mut n = 0;
    list_pages(conn, url_path, what, |mut item| {
        n += 1;
        item.insert("apiVersion".into(), api_version.into());
        item.insert("kind".into(), kind.into());
        let doc = Document { origin: Origin::new("cluster", n), value: serde_json::Value::Object(item) };
        if let Ok(mut o) = objects::decode(&doc) {
            // Objects of kinds this tool reads whole (Kueue's, a policy's params) keep their JSON.
            objects::keep_source(&mut o, doc.value, false);
            out.push(o);
        }
    })
    .await?;
    Ok(out)
}

/// [`for_each_object`], only the objects a label selector matches (the server filters).
async fn objects_selected<K>(conn: &Conn, namespace: Option<&str>, labels: Option<&str>, what: String, mut each: impl FnMut(Object)) -> Result<(), ReadError>
where
    K: kube::Resource<DynamicType = ()>,
{
    let (api_version, kind) = (K::api_version(&()), K::kind(&()));
    let mut n = 0;
    list_pages_filtered(conn, K::url_path(&(), namespace), None, labels, what, |mut item| {
        n += 1;
        item.insert("apiVersion".into(), api_version.as_ref().into());
        item.insert("kind".into(), kind.as_ref().into());
        let doc = Document { origin: Origin::new("cluster", n), value: serde_json::Value::Object(item) };
        if let Ok(o) = objects::decode(&doc) {
            each(o);
        }
    })
    .await
}

/// The paginated LIST of `url_path`, each item handed to `each` (as [`SlimPage`] reads it),
/// in list order; `--request-timeout` bounds each page. The next page is asked for as soon as
/// its continue token has arrived (it precedes the items), so the server prepares it while
/// this one is parsed (on a blocking thread) and handed out: at most two pages are held.
pub(super) async fn list_pages(
    conn: &Conn,
    url_path: String,
    what: String,
    each: impl FnMut(serde_json::Map<String, serde_json::Value>),
) -> Result<(), ReadError> {
    list_pages_selected(conn, url_path, None, what, each).await
}

/// [`list_pages`] with a field selector (`reason=FailedCreate`): the server filters.
pub(super) async fn list_pages_selected(
    conn: &Conn,
    url_path: String,
    field_selector: Option<&str>,
    what: String,
    each: impl FnMut(serde_json::Map<String, serde_json::Value>),
) -> Result<(), ReadError> {
    list_pages_filtered(conn, url_path, field_selector, None, what, each).await
}

/// [`list_pages`] with a field selector, a label selector, or both: the server filters.
async fn list_pages_filtered(
    conn: &Conn,
    url_path: String,
    field_selector: Option<&str>,
    label_selector: Option<&str>,
    what: String,
    mut each: impl FnMut(serde_json::Map<String, serde_json::Value>),
) -> Result<(), ReadError> {
    let request = kube::core::Request::new(url_path);
    let fetch = |token: Option<&str>| {
        let mut lp = ListParams::default().limit(page_size());
        if let Some(f) = field_selector {
            lp = lp.fields(f);
        }
        if let Some(l) = label_selector {
            lp = lp.labels(l);
        }
        if let Some(c) = token {
            lp = lp.continue_token(c);
        }
        let req = request.list(&lp);
        let (client, timeout) = (conn.client.clone(), conn.timeout);
        tokio::spawn(async move {
            let req = req.map_err(|e| RequestError::Kube(kube::Error::BuildRequest(e)))?;
            within(timeout, client.request_text(req)).await
        })
    };
    let failed = |e: String| ReadError { what: what.clone(), forbidden: false, unreachable: false, message: e };
    let endless = |message: String| ReadError { what: what.clone(), forbidden: false, unreachable: true, message };
    let mut pages = Pages::default();
    let mut next = Some(fetch(None));
    while let Some(task) = next.take() {
        let text = task.await.map_err(|e| failed(e.to_string()))?.map_err(|e| read_error(&conn.server, what.clone(), e))?;
        let early = continue_token(&text);
        if let Some(c) = &early {
            pages.token(&conn.server, c).map_err(endless)?;
            next = Some(fetch(Some(c)));
        }
        let page = tokio::task::spawn_blocking(move || serde_json::from_str::<SlimPage>(&text))
            .await
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| read_error(&conn.server, what.clone(), RequestError::Kube(kube::Error::SerdeError(e))))?;
        if early.is_none() {
            if let Some(c) = page.next.as_deref().filter(|c| !c.is_empty()) {
                pages.token(&conn.server, c).map_err(endless)?;
                next = Some(fetch(Some(c)));
            }
        }
        if next.is_some() {
            pages.items(&conn.server, page.items.len()).map_err(endless)?;
        }
        page.items.into_iter().for_each(&mut each);
    }
    Ok(())
}

/// The continue token of a LIST page from its text, when the list's metadata precedes its
/// items (as the API server writes it); `None` otherwise, or when there is none.
fn continue_token(text: &str) -> Option<String> {
    let head = &text[..text.find("\"items\":")?];
    let start = head.find("\"continue\":\"")? + "\"continue\":\"".len();
    let token = &head[start..start + head[start..].find('"')?];
    (!token.is_empty() && !token.contains('\\')).then(|| token.to_string())
}

/// Lists the quotas of `namespace` (or every namespace), paginated.
pub async fn quotas(conn: &Conn, namespace: Option<&str>) -> Result<Vec<Object>, ReadError> {
    let mut out = Vec::new();
    for_each_quota(conn, namespace, None, |o| out.push(o)).await?;
    Ok(out)
}

/// Hands each quota of `namespace` (or every namespace) to `each` as its page arrives; with
/// a label selector, only those it matches (the server filters).
pub async fn for_each_quota(conn: &Conn, namespace: Option<&str>, labels: Option<&str>, each: impl FnMut(Object)) -> Result<(), ReadError> {
    let what = match namespace {
        Some(ns) => format!("list resourcequotas in namespace {ns:?}"),
        None => "list resourcequotas in all namespaces".to_string(),
    };
    objects_selected::<ResourceQuota>(conn, namespace, labels, what, each).await
}

/// Namespace names (for completion); empty when they cannot be listed.
pub async fn namespace_names(conn: &Conn) -> Vec<String> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    list_all(api, "list namespaces".into(), conn.server.clone(), conn.timeout)
        .await
        .map(|v| v.into_iter().filter_map(|n| n.metadata.name).collect())
        .unwrap_or_default()
}

/// PriorityClass names (for `create`'s warning); `None` when they cannot be listed.
pub async fn priority_class_names(conn: &Conn) -> Option<Vec<String>> {
    let api = Api::<k8s_openapi::api::scheduling::v1::PriorityClass>::all(conn.client.clone());
    let list = list_all(api, "list priorityclasses".into(), conn.server.clone(), conn.timeout).await.ok()?;
    Some(list.into_iter().filter_map(|p| p.metadata.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_continue_token_is_read_before_its_items() {
        let cases = [
            (
                r#"{"kind":"ResourceQuotaList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"eyJ2IjoibWV0YSJ9","remainingItemCount":3},"items":[]}"#,
                Some("eyJ2IjoibWV0YSJ9"),
            ),
            (r#"{"kind":"ResourceQuotaList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"continue"}}]}"#, None),
            (r#"{"items":[{"metadata":{"continue":"x"}}],"metadata":{"continue":"y"}}"#, None),
            (r#"{"metadata":{"continue":""},"items":[]}"#, None),
            (r#"{"metadata":{"continue":"a\"b"},"items":[]}"#, None),
            ("not json", None),
        ];
        for (text, want) in cases {
            assert_eq!(continue_token(text).as_deref(), want, "{text}");
        }
    }
}
