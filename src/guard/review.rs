//! One AdmissionReview (admission.k8s.io/v1) in, its answer out: the workload decoded as any
//! manifest is, checked by the engine against the cached state of its namespace, and the
//! verdict worded as warnings that fit the API server's limits. No I/O: the caches are handed
//! in as a [`ClusterState`] of the request's namespace.
//!
//! The API server's limits on warnings (k8s.io/apiserver, `endpoints/filters/warning.go`, from
//! 1.21): each response carries at most 4096 characters (runes) of warning text; past that,
//! every warning is cut to 256 characters. Warnings with control characters are dropped
//! (`net.NewWarningHeader` refuses them). 1.20 cuts nothing, but sends everything in one
//! header. So each warning here is at most [`MAX_WARNING_CHARS`], control characters made
//! visible, and all of them together at most [`MAX_TOTAL_CHARS`].

use kubectl_quota_engine::check::{CheckOptions, Checker, ClusterState};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, ContainerList, ContainerLists};
use kubectl_quota_engine::report::warnings;
use serde_json::{json, Value};
use std::cell::RefCell;

/// The longest warning sent, in characters: the API server cuts longer ones to this length
/// once the response's warnings pass [`MAX_TOTAL_CHARS`], so none is ever cut by it.
pub const MAX_WARNING_CHARS: usize = 256;
/// All of a response's warnings together, in characters: the API server's own bound.
pub const MAX_TOTAL_CHARS: usize = 4096;

/// The largest object (its JSON) whose workload the guard replays admission policies on. The
/// policies read the whole object: its tree, the pod's and their CEL values take some 30 times
/// its JSON when it is many small maps (tens of thousands of containers), and the guard's
/// memory limit is 256Mi. Real workloads are a few KiB; the API server takes up to 3 MiB.
pub const POLICY_REPLAY_MAX_BYTES: usize = 512 << 10;

/// The namespace label that opts a namespace in to refusals (`enforce`), or out of the guard
/// (`ignore`, also read on objects).
pub const LABEL: &str = "kubectl-quota.io/guard";

/// The kinds whose pods controllers create later: (group, kind).
pub const WORKLOADS: [(&str, &str); 7] = [
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "ReplicationController"),
];

/// Whether (group, kind) is an autoscaler whose target's pods the guard speaks about (one the
/// guard reads from the cluster): its target is read when it is created or changed.
fn is_autoscaler(kind: (&str, &str)) -> bool {
    objects::autoscaler_type(kind.0, kind.1).is_some_and(|t| t.read)
}

/// The request fields the guard reads. The objects stay in the review's body, where the
/// parse found them: each is read into a tree only when it is decided, one after the other,
/// and never at all when the request is skipped; what [`concerns`] reads of them (owner,
/// opt-out label, whether the spec changed) was taken on the way, in a pass that builds
/// nothing.
pub struct Request {
    pub uid: String,
    pub group: String,
    pub kind: String,
    pub operation: String,
    pub namespace: String,
    body: Vec<u8>,
    /// Where `request.object` and `request.oldObject` are in `body`, when they are JSON
    /// objects (maps).
    object: Option<std::ops::Range<usize>>,
    old_object: Option<std::ops::Range<usize>>,
    facts: Facts,
}

/// What [`concerns`] reads of the objects.
#[derive(Default)]
struct Facts {
    /// The object names a controller among its owners.
    owned: bool,
    /// The object is labelled [`LABEL`]`: ignore`.
    opted_out: bool,
    /// The specs of the object and of the old object are equal (both absent counts).
    same_spec: bool,
}

/// What the guard answers, and why (for the metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub allowed: bool,
    pub warnings: Vec<String>,
    /// The refusal's message when not allowed.
    pub message: Option<String>,
    pub why: Why,
    /// How far quota lets the autoscaler of the request (or the workload's) scale, for the
    /// metrics.
    pub ceiling: Option<kubectl_quota_engine::autoscaling::Ceiling>,
}

/// Why the answer is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Not a workload, or not a request the guard speaks about (an object a controller owns,
    /// an update that leaves the pods as they are, an excluded namespace or object).
    Skipped,
    /// Checked: every pod fits (or the object itself is refused: the server says so).
    Fits,
    /// Checked: warned.
    Warned,
    /// Checked: refused (the namespace opted in, and no pod can be created).
    Denied,
    /// The object could not be decoded as the engine reads manifests: allowed, unsaid.
    Undecodable,
    /// Not decided within the guard's deadline (`--decision-timeout`): allowed, with a
    /// warning saying so.
    Late,
}

impl Why {
    pub fn label(self) -> &'static str {
        match self {
            Why::Skipped => "skipped",
            Why::Fits => "fits",
            Why::Warned => "warned",
            Why::Denied => "denied",
            Why::Undecodable => "undecodable",
            Why::Late => "late",
        }
    }
}

/// The review as read: only the fields the guard reads are kept (serde skips the others,
/// `userInfo`, `options`, the dry-run flag, without building them); the objects as where they
/// are in the body.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(borrow)]
    request: Option<RawRequest<'a>>,
}

#[derive(serde::Deserialize)]
struct RawRequest<'a> {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    kind: Gvk,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    namespace: String,
    #[serde(borrow)]
    object: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "oldObject", borrow)]
    old_object: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize, Default)]
struct Gvk {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

/// The container fields no part of a decision reads (the engine decodes none of them into
/// its model), and that make a container large: a workload's pods may carry thousands of
/// environment variables. Read past when no admission policy, which may read anything of a
/// pod, would see the tree (a lean tree). `the_engine_decodes_a_lean_tree_as_the_whole_one`
/// holds the engine to it.
const UNREAD_CONTAINER_FIELDS: [&str; 6] = ["env", "envFrom", "args", "command", "volumeMounts", "volumeDevices"];

/// The lists of containers in a pod spec.
const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// An object without what deciding never reads and a review can carry in bulk, skipped as it
/// is read, never built: its `metadata.managedFields` and its
/// `kubectl.kubernetes.io/last-applied-configuration` annotation (a copy of the whole
/// manifest); in a lean tree also the [`UNREAD_CONTAINER_FIELDS`] of every container.
struct Kept(Value);

/// Where in an object [`Prune`] reads.
#[derive(Clone, Copy, PartialEq)]
enum At {
    Top,
    Metadata,
    Annotations,
    /// Below the top, outside the metadata: in a lean tree, containers are looked for.
    Below,
    /// A list of containers, and one container.
    Containers,
    Container,
    /// Read as it is.
    Whole,
    /// Read as `Below`, on the way to the pod spec whose long container lists are taken as
    /// they are read ([`Taking`]): the field path still to go (`template.spec`).
    Toward(&'static str),
    /// That pod spec, and one of its two lists (`true`: `initContainers`).
    PodSpec,
    List(bool),
}

#[derive(Clone, Copy)]
struct Prune<'t> {
    at: At,
    lean: bool,
    /// Where the long container lists of a lean tree are taken as they are read.
    taking: Option<&'t RefCell<Taking>>,
}

/// A lean tree's pod spec (a Pod's, a workload's template's) whose container lists are longer
/// than the engine decodes whole ([`objects::MANY_CONTAINERS`]): each container is decoded as
/// it is read, its tree dropped, so that the containers are never held as trees all at once
/// (19,000 containers of a 3 MiB Deployment are 53 MB of trees). The engine takes the lists
/// so ([`objects::decode_with_lists`]) exactly as it takes long lists from a whole tree.
///
/// Where the pod spec is depends on the object's apiVersion and kind: the lists are taken
/// only when both come before its `spec` (as the API server writes objects). A map on the
/// way that gives one of the keys twice leaves to the tree which of the two counts: the
/// object is then read again as a whole tree.
#[derive(Default)]
struct Taking {
    api_version: Option<String>,
    kind: Option<String>,
    /// The pod spec's field path (`spec.template.spec`), once on the way to it.
    path: Option<&'static str>,
    /// The lists of the pod spec being read that were long, taken (containers, init containers).
    long: [Option<ContainerList>; 2],
    /// The pod spec's lists, once it is read with one of them long.
    lists: Option<ContainerLists>,
    twice: bool,
}

impl Prune<'_> {
    /// On the way to the pod spec whose lists are taken: how the value of `key` of a map read
    /// at `self.at` is read, when `key` is on the way.
    fn way(&self, key: &str) -> Option<At> {
        let taking = self.taking?;
        match self.at {
            At::Top if key == "spec" => {
                let mut t = taking.borrow_mut();
                let path = objects::container_lists_at(t.api_version.as_deref()?, t.kind.as_deref()?)?;
                t.path = Some(path);
                match path.strip_prefix("spec")? {
                    "" => Some(At::PodSpec),
                    rest => rest.strip_prefix('.').map(At::Toward),
                }
            }
            At::Toward(rest) => {
                let (first, rest) = rest.split_once('.').unwrap_or((rest, ""));
                (key == first).then_some(if rest.is_empty() { At::PodSpec } else { At::Toward(rest) })
            }
            At::PodSpec => match key {
                "containers" => Some(At::List(false)),
                "initContainers" => Some(At::List(true)),
                _ => None,
            },
            _ => None,
        }
    }

    /// How the value of `key` of a map read at `self.at` is read; `None`: skipped.
    fn field(&self, key: &str) -> Option<At> {
        let lean = self.lean;
        match self.at {
            At::Top if key == "metadata" => Some(At::Metadata),
            At::Top | At::Below | At::Toward(_) | At::PodSpec if lean && CONTAINER_LISTS.contains(&key) => Some(At::Containers),
            At::Top | At::Below | At::Toward(_) | At::PodSpec if lean => Some(At::Below),
            At::Metadata if key == "managedFields" => None,
            At::Metadata if key == "annotations" => Some(At::Annotations),
            At::Annotations if key == "kubectl.kubernetes.io/last-applied-configuration" => None,
            At::Container if UNREAD_CONTAINER_FIELDS.contains(&key) => None,
            _ => Some(At::Whole),
        }
    }

    /// How each element of a list read at `self.at` is read.
    fn element(&self) -> At {
        match self.at {
            At::Containers | At::List(_) => At::Container,
            At::Below | At::Toward(_) | At::PodSpec if self.lean => At::Below,
            _ => At::Whole,
        }
    }

    /// The end of the pod spec whose lists are taken, read into `out`: when one of its lists
    /// was long, both are taken (as the engine takes them from a whole tree), `[]` left in
    /// their place.
    fn pod_spec_read(&self, out: &mut serde_json::Map<String, Value>) {
        let Some(taking) = self.taking else { return };
        let mut t = taking.borrow_mut();
        let [containers, init_containers] = std::mem::take(&mut t.long);
        if containers.is_none() && init_containers.is_none() {
            return;
        }
        let path = t.path.unwrap_or_default();
        let mut take = |key: &str, long: Option<ContainerList>| {
            let v = out.get_mut(key)?;
            let items = std::mem::replace(v, Value::Array(Vec::new()));
            long.or_else(|| {
                let Value::Array(items) = items else { return None };
                let mut list = ContainerList::new(path, key);
                items.iter().for_each(|c| list.push(c));
                Some(list)
            })
        };
        let lists = ContainerLists { init_containers: take("initContainers", init_containers), containers: take("containers", containers) };
        t.lists = Some(lists);
    }

    /// One of the pod spec's lists (`init`: `initContainers`), read: as trees while it is no
    /// longer than the engine decodes whole, then taken a container at a time.
    fn list_read<'de, A: serde::de::SeqAccess<'de>>(self, init: bool, mut seq: A) -> Result<Value, A::Error> {
        let taking = self.taking.expect("lists are read where they are taken");
        let path = taking.borrow().path.unwrap_or_default();
        let mut items = Vec::new();
        let mut long: Option<ContainerList> = None;
        while let Some(v) = seq.next_element_seed(Prune { at: At::Container, ..self })? {
            match &mut long {
                Some(list) => list.push(&v),
                None => {
                    items.push(v);
                    if items.len() > objects::MANY_CONTAINERS {
                        let mut list = ContainerList::new(path, if init { "initContainers" } else { "containers" });
                        items.drain(..).for_each(|c| list.push(&c));
                        long = Some(list);
                    }
                }
            }
        }
        let taken = long.is_some();
        taking.borrow_mut().long[usize::from(init)] = long;
        Ok(Value::Array(if taken { Vec::new() } else { items }))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Prune<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.at == At::Whole {
            return serde::Deserialize::deserialize(d);
        }
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Prune<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        // The keys of this map on the way to the pod spec whose lists are taken.
        let mut way: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let on_way = self.way(&key);
            if let (Some(at), Some(taking)) = (on_way, self.taking) {
                if way.contains(&key) {
                    taking.borrow_mut().twice = true;
                }
                way.push(key.clone());
                if let At::List(init) = at {
                    // Given twice, the later counts.
                    taking.borrow_mut().long[usize::from(init)] = None;
                }
            }
            match on_way.or_else(|| self.field(&key)) {
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Some(at) => {
                    let v = map.next_value_seed(Prune { at, ..self })?;
                    if let (At::Top, Some(taking), "apiVersion" | "kind") = (self.at, self.taking, key.as_str()) {
                        let mut t = taking.borrow_mut();
                        let seen = if key == "kind" { &mut t.kind } else { &mut t.api_version };
                        let twice = seen.is_some();
                        *seen = v.as_str().map(str::to_string);
                        t.twice |= twice;
                    }
                    out.insert(key, v);
                }
            }
        }
        if self.at == At::PodSpec {
            self.pod_spec_read(&mut out);
        }
        Ok(Value::Object(out))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if let At::List(init) = self.at {
            return self.list_read(init, seq);
        }
        let mut out = Vec::new();
        let at = self.element();
        while let Some(v) = seq.next_element_seed(Prune { at, ..self })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    // Anything else is read as it is (an object that is not a map is not decoded).
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

impl Kept {
    /// Reads the object in `text`, a lean tree when `lean`, its long container lists taken
    /// into `taking` when given ([`Taking`]).
    fn read(text: &[u8], lean: bool, taking: Option<&RefCell<Taking>>) -> serde_json::Result<Kept> {
        let mut d = serde_json::Deserializer::from_slice(text);
        let v = serde::de::DeserializeSeed::deserialize(Prune { at: At::Top, lean, taking }, &mut d)?;
        d.end()?;
        Ok(Kept(v))
    }
}

/// Reads an AdmissionReview: `Err` says what is wrong with it, for a 400. The body is kept
/// in the request (the objects are read from it when decided), nothing else as large.
pub fn parse(body: Vec<u8>) -> Result<Request, String> {
    let v: Envelope = serde_json::from_slice(&body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if (v.api_version.as_str(), v.kind.as_str()) != ("admission.k8s.io/v1", "AdmissionReview") {
        return Err(format!("want an admission.k8s.io/v1 AdmissionReview, got apiVersion {:?} kind {:?}", v.api_version, v.kind));
    }
    let Some(req) = v.request else {
        return Err("the AdmissionReview has no request".into());
    };
    if req.uid.is_empty() {
        return Err("the AdmissionReview's request has no uid".into());
    }
    // What concerns() reads of each, in one pass that builds nothing; an object that is not
    // a map is no object.
    let read = |raw: Option<&serde_json::value::RawValue>| -> Result<Option<(std::ops::Range<usize>, ObjectFacts)>, String> {
        let Some(raw) = raw else { return Ok(None) };
        let facts: ObjectFacts = serde_json::from_str(raw.get()).map_err(|e| format!("the body is not JSON: {e}"))?;
        // The raw text lies inside the body (it is borrowed from it): its place, from the two
        // addresses, checked.
        let start = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        let at = start..start.saturating_add(raw.get().len());
        if body.get(at.clone()) != Some(raw.get().as_bytes()) {
            return Err("the AdmissionReview's objects could not be placed".into());
        }
        Ok(facts.map.then_some((at, facts)))
    };
    let object = read(req.object)?;
    let old_object = read(req.old_object)?;
    let facts = Facts {
        owned: object.as_ref().is_some_and(|(_, f)| f.owned),
        opted_out: object.as_ref().is_some_and(|(_, f)| f.opted_out),
        same_spec: object.as_ref().map(|(_, f)| f.spec) == old_object.as_ref().map(|(_, f)| f.spec),
    };
    let (uid, group, kind, operation, namespace) = (req.uid, req.kind.group, req.kind.kind, req.operation, req.namespace);
    Ok(Request { uid, group, kind, operation, namespace, object: object.map(|o| o.0), old_object: old_object.map(|o| o.0), facts, body })
}

impl Request {
    /// The object as a JSON tree, without what deciding never reads ([`Kept`]).
    pub fn object(&self) -> Option<Value> {
        self.tree(self.object.clone(), false)
    }

    /// The old object (of an update), as [`Request::object`].
    pub fn old_object(&self) -> Option<Value> {
        self.tree(self.old_object.clone(), false)
    }

    /// The object or old object at `at`, a lean tree when `lean` ([`Kept`]).
    fn tree(&self, at: Option<std::ops::Range<usize>>, lean: bool) -> Option<Value> {
        // Read once already, as JSON: it reads again.
        Kept::read(self.body.get(at?)?, lean, None).ok().map(|k| k.0)
    }

    /// The object or old object at `at` as a lean tree, with its pod spec's long container
    /// lists taken as they were read ([`Taking`]) when it has them.
    fn lean_tree(&self, at: Option<std::ops::Range<usize>>) -> Option<(Value, Option<ContainerLists>)> {
        let taking = RefCell::new(Taking::default());
        let v = Kept::read(self.body.get(at.clone()?)?, true, Some(&taking)).ok()?.0;
        let taking = taking.into_inner();
        if taking.twice {
            return self.tree(at, true).map(|v| (v, None));
        }
        Some((v, taking.lists))
    }
}

/// What [`concerns`] reads of an object, read without building it: whether it is a map, names a
/// controller among its owners, carries the opt-out label, and a hash of its spec.
#[derive(Default)]
struct ObjectFacts {
    map: bool,
    owned: bool,
    opted_out: bool,
    /// `None`: no spec.
    spec: Option<u128>,
}

impl<'de> serde::Deserialize<'de> for ObjectFacts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ObjectFacts, D::Error> {
        use serde::de::{IgnoredAny, MapAccess};
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ObjectFacts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ObjectFacts, A::Error> {
                let mut out = ObjectFacts { map: true, ..ObjectFacts::default() };
                while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                    match &*key {
                        // A key given twice: the last one counts, as in a tree.
                        "metadata" => {
                            let m = map.next_value::<facts::Meta>()?;
                            (out.owned, out.opted_out) = (m.owned, m.opted_out);
                        }
                        "spec" => out.spec = Some(map.next_value::<facts::Hash>()?.0),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(out)
            }
            // Anything but a map is no object: read past it.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<ObjectFacts, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjectFacts::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
            fn visit_unit<E>(self) -> Result<ObjectFacts, E> {
                Ok(ObjectFacts::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Readers of what [`concerns`] needs of an object, which build nothing of it: they take any
/// JSON (a field of an unexpected type counts as absent, as it did when read from a tree).
mod facts {
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::hash::{BuildHasher, Hasher};

    /// Read past whatever comes: the `visit_*` of a value whose content does not matter.
    macro_rules! ignore_scalars {
        ($out:expr) => {
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok($out)
            }
        };
    }

    fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    /// `metadata`: whether some owner reference says `controller: true`, and whether the label
    /// [`super::LABEL`] is `ignore`.
    #[derive(Default)]
    pub struct Meta {
        pub owned: bool,
        pub opted_out: bool,
    }

    impl<'de> serde::Deserialize<'de> for Meta {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Meta, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Meta;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("metadata")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta, A::Error> {
                    let mut out = Meta::default();
                    while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                        match &*key {
                            "ownerReferences" => out.owned = map.next_value::<Flag<AnyController>>()?.0,
                            "labels" => out.opted_out = map.next_value::<Flag<OptOut>>()?.0,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(out)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Meta, A::Error> {
                    drain_seq(seq).map(|()| Meta::default())
                }
                ignore_scalars!(Meta::default());
            }
            d.deserialize_any(V)
        }
    }

    /// A yes or no read from a value as `K` says: false for anything not shaped as it wants.
    pub struct Flag<K>(pub bool, std::marker::PhantomData<K>);

    /// What a [`Flag`] looks for.
    pub trait Look {
        /// A list, some element of which is a map that [`Controller`] finds; else a map, whose
        /// value at `KEY` (its last, when given twice) is one `want` says yes to.
        const LIST: bool;
        const KEY: &'static str;
        fn want(v: &serde_json::Value) -> bool;
    }

    /// `ownerReferences`: some reference says `controller: true`.
    pub struct AnyController;
    /// One owner reference: `controller: true`.
    pub struct Controller;
    /// `labels`: [`super::LABEL`] is `ignore`.
    pub struct OptOut;

    impl Look for AnyController {
        const LIST: bool = true;
        const KEY: &'static str = "";
        fn want(_: &serde_json::Value) -> bool {
            false
        }
    }

    impl Look for Controller {
        const LIST: bool = false;
        const KEY: &'static str = "controller";
        fn want(v: &serde_json::Value) -> bool {
            v.as_bool() == Some(true)
        }
    }

    impl Look for OptOut {
        const LIST: bool = false;
        const KEY: &'static str = super::LABEL;
        fn want(v: &serde_json::Value) -> bool {
            v.as_str() == Some("ignore")
        }
    }

    impl<'de, K: Look> serde::Deserialize<'de> for Flag<K> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Flag<K>, D::Error> {
            struct V<K>(std::marker::PhantomData<K>);
            impl<'de, K: Look> Visitor<'de> for V<K> {
                type Value = Flag<K>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any JSON")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Flag<K>, A::Error> {
                    let mut found = false;
                    while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                        if !K::LIST && key == K::KEY {
                            found = map.next_value::<Scalar>()?.0.is_some_and(|v| K::want(&v));
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(Flag(found, std::marker::PhantomData))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flag<K>, A::Error> {
                    let mut any = false;
                    if K::LIST {
                        while let Some(one) = seq.next_element::<Flag<Controller>>()? {
                            any |= one.0;
                        }
                    } else {
                        drain_seq(seq)?;
                    }
                    Ok(Flag(any, std::marker::PhantomData))
                }
                ignore_scalars!(Flag(false, std::marker::PhantomData));
            }
            d.deserialize_any(V(std::marker::PhantomData))
        }
    }

    /// A scalar value as it is (a string, a number, a bool, null); `None` for a map or a
    /// list, read past.
    pub struct Scalar(pub Option<serde_json::Value>);

    impl<'de> serde::Deserialize<'de> for Scalar {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Scalar;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any JSON")
                }
                fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.into())))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.into())))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.into())))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.into())))
                }
                fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.into())))
                }
                fn visit_unit<E>(self) -> Result<Scalar, E> {
                    Ok(Scalar(Some(serde_json::Value::Null)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
                    drain_seq(seq).map(|()| Scalar(None))
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
                    drain_map(map).map(|()| Scalar(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// A hash of a JSON value that two values share exactly when they are equal as trees
    /// ([`serde_json::Value`]'s `==`: a map's keys in any order, the last of a repeated key
    /// counting... up to a 2^-128 chance, keyed afresh in each process so that no input can
    /// be made to collide): a spec compared without building it.
    pub struct Hash(pub u128);

    fn keys() -> &'static [std::hash::RandomState; 2] {
        static KEYS: std::sync::OnceLock<[std::hash::RandomState; 2]> = std::sync::OnceLock::new();
        KEYS.get_or_init(|| [std::hash::RandomState::new(), std::hash::RandomState::new()])
    }

    /// The hash of a tag and some bytes and numbers.
    fn h(tag: u8, bytes: &[u8], numbers: &[u128]) -> u128 {
        let [a, b] = keys().each_ref().map(|k| {
            let mut s = k.build_hasher();
            s.write_u8(tag);
            s.write_usize(bytes.len());
            s.write(bytes);
            for n in numbers {
                s.write_u128(*n);
            }
            s.finish()
        });
        (u128::from(a) << 64) | u128::from(b)
    }

    impl<'de> serde::Deserialize<'de> for Hash {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Hash, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Hash;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any JSON")
                }
                fn visit_bool<E>(self, v: bool) -> Result<Hash, E> {
                    Ok(Hash(h(0, &[u8::from(v)], &[])))
                }
                // As a tree holds numbers: a whole number not below zero is one kind whichever
                // way it came, a negative one another, any other a float (0.0 and -0.0 equal).
                fn visit_u64<E>(self, v: u64) -> Result<Hash, E> {
                    Ok(Hash(h(1, &v.to_le_bytes(), &[])))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Hash, E> {
                    match u64::try_from(v) {
                        Ok(u) => Ok(Hash(h(1, &u.to_le_bytes(), &[]))),
                        Err(_) => Ok(Hash(h(2, &v.to_le_bytes(), &[]))),
                    }
                }
                fn visit_f64<E>(self, v: f64) -> Result<Hash, E> {
                    let v = if v == 0.0 { 0.0f64 } else { v };
                    Ok(Hash(h(3, &v.to_bits().to_le_bytes(), &[])))
                }
                fn visit_str<E>(self, v: &str) -> Result<Hash, E> {
                    Ok(Hash(h(4, v.as_bytes(), &[])))
                }
                fn visit_unit<E>(self) -> Result<Hash, E> {
                    Ok(Hash(h(5, &[], &[])))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Hash, A::Error> {
                    // In order: each element chained to those before it.
                    let mut acc = h(6, &[], &[]);
                    while let Some(Hash(e)) = seq.next_element()? {
                        acc = h(6, &[], &[acc, e]);
                    }
                    Ok(Hash(acc))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hash, A::Error> {
                    // In any order: the entries' hashes added up. A key given twice counts
                    // once, its last value, as in a tree: each entry is kept as two hashes,
                    // its key's and its own, until the map ends (32 bytes an entry).
                    let mut entries: Vec<(u128, u128)> = Vec::new();
                    while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                        let Hash(v) = map.next_value()?;
                        entries.push((h(9, key.as_bytes(), &[]), h(7, key.as_bytes(), &[v])));
                    }
                    // Stable: of the entries of one key, the last stays last.
                    entries.sort_by_key(|e| e.0);
                    let mut sum = 0u128;
                    let mut n = 0u128;
                    for (i, e) in entries.iter().enumerate() {
                        if entries.get(i + 1).is_none_or(|next| next.0 != e.0) {
                            sum = sum.wrapping_add(e.1);
                            n += 1;
                        }
                    }
                    Ok(Hash(h(8, &[], &[sum, n])))
                }
            }
            d.deserialize_any(V)
        }
    }
}

/// The AdmissionReview answering `uid`.
pub fn response(uid: &str, a: &Answer) -> Value {
    let mut r = json!({ "uid": uid, "allowed": a.allowed });
    if !a.warnings.is_empty() {
        r["warnings"] = json!(a.warnings);
    }
    if let Some(m) = &a.message {
        r["status"] = json!({ "code": 403, "reason": "Forbidden", "message": m });
    }
    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r })
}

/// The answer to a review not decided within `deadline` (`--decision-timeout`): allowed (the
/// guard never holds up the API server), with a warning saying it was not checked.
pub fn late(deadline: std::time::Duration) -> Answer {
    let warning = format!(
        "kubectl-quota guard: could not decide within {} ms (--decision-timeout): not checked; `kubectl quota check -f` the manifest to see whether its pods fit",
        deadline.as_millis()
    );
    Answer { allowed: true, warnings: fit(vec![warning]), message: None, why: Why::Late, ceiling: None }
}

/// Whether the guard speaks about this request at all, before anything is decoded: a workload
/// kind or an autoscaler, created or updated, not owned by a controller (the controller's
/// creator was answered: the HPA KEDA makes for a ScaledObject, say), not labelled to opt out,
/// and on update with a changed spec (metadata and status changes do not change the pods).
pub fn concerns(req: &Request) -> bool {
    let kind = (req.group.as_str(), req.kind.as_str());
    if !(WORKLOADS.contains(&kind) || is_autoscaler(kind)) || !matches!(req.operation.as_str(), "CREATE" | "UPDATE") {
        return false;
    }
    if req.object.is_none() || req.facts.owned || req.facts.opted_out {
        return false;
    }
    !(req.operation == "UPDATE" && req.old_object.is_some() && req.facts.same_spec)
}

/// The workload an autoscaler of the request names (`spec.scaleTargetRef`; a VPA's
/// `spec.targetRef`), which the guard
/// reads from the cluster to answer for its pods; `None` for any other request.
pub fn scale_target(req: &Request) -> Option<objects::ScaleTarget> {
    if !is_autoscaler((req.group.as_str(), req.kind.as_str())) {
        return None;
    }
    let field = if req.kind == "VerticalPodAutoscaler" { "targetRef" } else { "scaleTargetRef" };
    // An autoscaler is small: read whole.
    let object = req.object()?;
    let t = object.get("spec")?.get(field)?;
    let field = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
    let target = objects::ScaleTarget { api_version: field("apiVersion"), kind: field("kind"), name: field("name") };
    (!target.kind.is_empty() && !target.name.is_empty()).then_some(target)
}

/// Where a request's object is said to come from (`create Deployment/shop`): the document its
/// pods are answered for, a dry run's answer too.
fn origin(req: &Request) -> Origin {
    Origin::new(format!("{} {}/{}", req.operation.to_lowercase(), req.kind, req.namespace), 1)
}

/// The pod to ask the API server for in a dry run, for a workload the guard [`concerns`]
/// itself with whose pods a mutating webhook sees (as `state` has the webhooks and the
/// namespace's labels).
pub struct PodAsk {
    /// The document the answer is for, as [`decide`] reads the request.
    pub source: kubectl_quota_engine::check::dry_run::PodSource,
    pub namespace: String,
    /// The Pod, as JSON: the template as its controller sends it.
    pub json: String,
    /// The mutating webhooks that see it (`name (configuration)`).
    pub webhooks: Vec<String>,
}

/// The pod of a workload's request to ask for in a dry run (`check`'s choice: the engine's
/// `dry_runs_needed` and `pod_to_send`); `None` when no mutating webhook sees its pods, and
/// for anything but a workload: a Pod (a dry run's own pod reaching the guard among them) or
/// an autoscaler is never asked for, so a dry run never leads to another.
pub fn dry_run_pod(req: &Request, state: &ClusterState) -> Option<PodAsk> {
    use kubectl_quota_engine::check::dry_run::{dry_runs_needed, pod_to_send};
    if !WORKLOADS.contains(&(req.group.as_str(), req.kind.as_str())) || !state.webhooks.as_ref().is_some_and(|w| w.values().any(|c| c.mutating)) {
        return None;
    }
    // The whole tree: the webhook reads whatever it likes of the pod.
    let tree = req.tree(req.object.clone(), false)?;
    let doc = Document { origin: origin(req), value: tree };
    let obj = objects::decode(&doc).ok()?;
    let ask = dry_runs_needed(state, std::slice::from_ref(&obj), &req.namespace).pop()?;
    let json = serde_json::to_string(&pod_to_send(&doc.value, &obj)?).ok()?;
    Some(PodAsk { source: ask.source, namespace: ask.namespace, json, webhooks: ask.webhooks })
}

/// Decides a request the guard [`concerns`] itself with: `state` holds the namespace's quotas,
/// LimitRanges and classes (and the namespace with its labels, when known); `enforce` is
/// whether the namespace opted in to refusals.
pub fn decide(req: Request, mut state: ClusterState, opts: &CheckOptions, enforce: bool) -> Answer {
    let origin = || origin(&req);
    // A workload's template keeps its spec as sent where admission policies would read it
    // (some policy is bound); a pod's never is (below). Where none is kept, the tree is a lean
    // one. Each object is read into a tree, decoded and its tree dropped before the next is
    // read: one tree at a time.
    let is_pod = (req.group.as_str(), req.kind.as_str()) == ("", "Pod");
    let bound = state.policies.as_ref().is_some_and(|p| p.any(false) || p.any(true));
    // The policies read the whole object, which as a tree (and again as CEL values) takes
    // some 30 times its JSON: over the bound they are not replayed here, and the answer says so.
    let size = req.object.as_ref().map_or(0, |r| r.len());
    let over = bound && !is_pod && size > POLICY_REPLAY_MAX_BYTES;
    if over {
        state.policies = None;
    }
    let unreplayed = over.then(|| {
        format!(
            "kubectl-quota guard: the admission policies were not replayed on this {} ({} KiB, over the guard's {} KiB): `kubectl quota check -f` it to see what they say",
            req.kind,
            size >> 10,
            POLICY_REPLAY_MAX_BYTES >> 10
        )
    });
    let sources = bound && !is_pod && !over;
    let decode = |(v, lists): (Value, Option<ContainerLists>), source: bool| {
        let doc = Document { origin: origin(), value: v };
        let obj = match lists {
            Some(lists) => objects::decode_with_lists(&doc, lists),
            None => objects::decode(&doc),
        };
        obj.map(|mut o| {
            objects::keep_source(&mut o, doc.value, source);
            o
        })
    };
    let object = if sources { req.tree(req.object.clone(), false).map(|v| (v, None)) } else { req.lean_tree(req.object.clone()) };
    let Some(Ok(obj)) = object.map(|t| decode(t, sources)) else {
        return Answer { allowed: true, warnings: vec![], message: None, why: Why::Undecodable, ceiling: None };
    };
    // The old object stands for what exists: the policies never read it (a lean tree).
    if let Some(Ok(mut old)) = req.lean_tree(req.old_object.clone()).map(|t| decode(t, false)) {
        old.meta.namespace = Some(req.namespace.clone());
        old.meta.resource_version.get_or_insert_with(|| "1".into());
        state.existing.insert((req.namespace.clone(), old.type_info.group_resource(), old.meta.name.clone()), old);
    }
    // The body is read no more.
    let Request { namespace, body, .. } = req;
    drop(body);
    // A pod reaches the webhook past the server's own admission policies (they run before the
    // validating webhooks): what it is sent is what they left. A workload's pods still meet them.
    if let objects::Body::Pod(_) = &obj.body {
        state.policies = None;
    }
    // A pod reaches the webhook past the server's own ServiceAccount plugin: its ServiceAccount
    // exists, whatever the cache has seen yet.
    if let objects::Body::Pod(p) = &obj.body {
        let name = if p.service_account_name.is_empty() { "default" } else { p.service_account_name.as_str() };
        state.service_accounts.entry(namespace.clone()).or_default().insert(name.to_string());
    }
    let mut checker = Checker::new(&mut state, opts);
    if let objects::Body::Autoscaler(_) | objects::Body::VerticalAutoscaler(_) = &obj.body {
        // The autoscaler as sent, not the cached one it replaces, decides its target's count.
        checker.expect(std::slice::from_ref(&obj));
    }
    let report = checker.check_one(obj);
    // The webhooks its pods meet follow, named as `check` names them: the answer rests on them.
    let mut said = warnings::for_document(&report);
    said.extend(warnings::webhooks(&report, !said.is_empty()));
    said.extend(unreplayed);
    let said = fit(said);
    let ceiling = report.autoscaling.clone();
    if said.is_empty() {
        return Answer { allowed: true, warnings: said, message: None, why: Why::Fits, ceiling };
    }
    if enforce && warnings::no_pod_created(&report) {
        // The refusal says the first sentence; the others stay warnings.
        let mut rest = said.into_iter();
        let message = format!("kubectl-quota guard: {}", rest.next().unwrap_or_default());
        return Answer { allowed: false, warnings: rest.collect(), message: Some(message), why: Why::Denied, ceiling };
    }
    Answer { allowed: true, warnings: said, message: None, why: Why::Warned, ceiling }
}

/// Warnings as the API server will show them whole: control characters made visible, each cut
/// to [`MAX_WARNING_CHARS`] (ending in `...`), and no more than [`MAX_TOTAL_CHARS`] in all.
pub fn fit(warnings: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    for w in warnings {
        let w = crate::escape::escape(&w).into_owned();
        let n = w.chars().count();
        let w = if n > MAX_WARNING_CHARS { w.chars().take(MAX_WARNING_CHARS - 3).collect::<String>() + "..." } else { w };
        let n = w.chars().count();
        if total + n > MAX_TOTAL_CHARS {
            break;
        }
        total += n;
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})).unwrap()
    }

    #[test]
    fn bad_reviews_are_named() {
        let cases: [(&[u8], &str); 4] = [
            (b"{", "the body is not JSON"),
            (br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#, "want an admission.k8s.io/v1 AdmissionReview"),
            (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#, "has no request"),
            (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}"#, "has no uid"),
        ];
        for (body, want) in cases {
            let e = parse(body.to_vec()).err().unwrap();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn deep_or_broken_objects_never_crash_the_parse() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let review = |object: &str| {
            parse(format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{object}}}}}"#).into_bytes())
        };
        // Read past where nothing is built: an object that is not a map is no object, and a
        // tree of one too deep is none either (so it is not decided).
        assert!(review(&deep(100_000)).unwrap().object().is_none());
        assert!(review(&format!(r#"{{"metadata":{{"labels":{}}}}}"#, deep(100_000))).unwrap().object().is_none());
        // A spec is hashed as deep as serde_json reads: past that, a bad review.
        assert!(review(&format!(r#"{{"spec":{}}}"#, deep(100_000))).is_err());
        assert!(review("{").is_err());
        assert!(review(&format!(r#"{{"spec":{}}}"#, deep(100))).unwrap().object().is_some());
    }

    #[test]
    fn what_deciding_never_reads_is_not_kept() {
        let object = json!({"metadata": {"name": "web", "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
        let r = parse(review(json!({"uid": "u", "kind": {"group": "apps", "kind": "Deployment"}, "operation": "UPDATE", "namespace": "a",
            "userInfo": {"username": "me", "groups": ["x"]}, "object": object, "oldObject": object})))
        .unwrap();
        let want = json!({"metadata": {"name": "web", "annotations": {"team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
        assert_eq!(r.object(), Some(want.clone()));
        assert_eq!(r.old_object(), Some(want));
        assert_eq!((r.uid.as_str(), r.group.as_str(), r.kind.as_str(), r.operation.as_str(), r.namespace.as_str()), ("u", "apps", "Deployment", "UPDATE", "a"));
        // An object that is not a map is no object.
        assert!(parse(review(json!({"uid": "u", "object": [1, "two"]}))).unwrap().object().is_none());
    }

    /// `v` as JSON text with every map's keys in reverse order (as no serializer here writes them).
    fn reversed(v: &Value) -> String {
        match v {
            Value::Object(m) => {
                format!("{{{}}}", m.iter().rev().map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), reversed(v))).collect::<Vec<_>>().join(","))
            }
            Value::Array(a) => format!("[{}]", a.iter().map(reversed).collect::<Vec<_>>().join(",")),
            v => v.to_string(),
        }
    }

    /// Whether the guard takes an update with these two specs (JSON text) as one that leaves
    /// them as they were.
    fn same_spec(new: &str, old: &str) -> bool {
        let body = format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"UPDATE","object":{{"spec":{new}}},"oldObject":{{"spec":{old}}}}}}}"#
        );
        !concerns(&parse(body.into_bytes()).unwrap())
    }

    #[test]
    fn specs_are_compared_as_trees_without_building_them() {
        let cases = [
            (r#"{"a":1,"b":[1,2]}"#, r#"{"b":[1,2],"a":1}"#, true),
            (r#"{"a":1,"b":[1,2]}"#, r#"{"a":1,"b":[2,1]}"#, false),
            (r#"{"a":1}"#, r#"{"a":1.0}"#, false),
            (r#"{"a":0.0}"#, r#"{"a":-0.0}"#, true),
            (r#"{"a":-1}"#, r#"{"a":-1}"#, true),
            (r#"{"a":"1"}"#, r#"{"a":1}"#, false),
            (r#"{"a":{}}"#, r#"{"a":[]}"#, false),
            (r#"{"a":null}"#, r#"{}"#, false),
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#, true),
            (r#"{"a":2,"a":1}"#, r#"{"a":2}"#, false),
            (r#"{"a":[{"x":1,"y":2}]}"#, r#"{"a":[{"y":2,"x":1}]}"#, true),
            (r#"{"a":"\u0041"}"#, r#"{"a":"A"}"#, true),
        ];
        for (new, old, want) in cases {
            let trees = serde_json::from_str::<Value>(new).unwrap() == serde_json::from_str::<Value>(old).unwrap();
            assert_eq!(trees, want, "{new} {old}");
            assert_eq!(same_spec(new, old), want, "{new} {old}");
        }
        // No spec on either side is the same spec; on one side only, a change.
        let body = |old: &str| {
            format!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"UPDATE","object":{{"metadata":{{}}}},"oldObject":{old}}}}}"#
            )
        };
        assert!(!concerns(&parse(body("{}").into_bytes()).unwrap()));
        assert!(concerns(&parse(body(r#"{"spec":{}}"#).into_bytes()).unwrap()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 400, ..Default::default() })]
        #[test]
        fn a_spec_is_the_same_exactly_when_its_tree_is(a in json_value(), b in json_value(), flip in proptest::bool::ANY) {
            let b = if flip { a.clone() } else { b };
            proptest::prop_assert_eq!(same_spec(&a.to_string(), &reversed(&b)), a == b);
        }
    }

    /// Small JSON values over few keys and scalars, so that equal ones come often.
    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            prop_oneof![Just(0.0f64), Just(-0.0), Just(1.0), Just(2.5)].prop_map(Value::from),
            prop_oneof![Just("a"), Just("b"), Just("")].prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(prop_oneof![Just("x".to_string()), Just("y".to_string()), Just("z".to_string())], inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn an_owner_or_the_opt_out_label_is_read_whatever_shape_the_metadata_has() {
        let with = |meta: &str| {
            let body = format!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"CREATE","object":{{"metadata":{meta},"spec":{{}}}}}}}}"#
            );
            concerns(&parse(body.into_bytes()).unwrap())
        };
        let label = LABEL;
        for (meta, concerned) in [
            (r#"{"ownerReferences":[{"controller":true}]}"#.to_string(), false),
            (r#"{"ownerReferences":[{"controller":false},{"kind":"x","controller":true}]}"#.into(), false),
            (r#"{"ownerReferences":[{"controller":"true"}]}"#.into(), true),
            (r#"{"ownerReferences":[{"controller":true,"controller":false}]}"#.into(), true),
            (r#"{"ownerReferences":{"controller":true}}"#.into(), true),
            (r#"{"ownerReferences":[[{"controller":true}], 1, null]}"#.into(), true),
            (format!(r#"{{"labels":{{"{label}":"ignore"}}}}"#), false),
            (format!(r#"{{"labels":{{"{label}":"enforce"}}}}"#), true),
            (format!(r#"{{"labels":{{"{label}":["ignore"]}}}}"#), true),
            (format!(r#"{{"labels":[{{"{label}":"ignore"}}]}}"#), true),
            ("5".into(), true),
            ("[]".into(), true),
        ] {
            assert_eq!(with(&meta), concerned, "{meta}");
        }
    }

    #[test]
    fn the_engine_decodes_a_lean_tree_as_the_whole_one() {
        let container = |name: &str| {
            json!({"name": name, "image": "app:1", "imagePullPolicy": "Always", "restartPolicy": if name == "side" { json!("Always") } else { Value::Null },
                "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "envFrom": [{"configMapRef": {"name": "c"}}], "args": ["--x"], "command": ["/app"],
                "volumeMounts": [{"name": "v", "mountPath": "/v"}], "volumeDevices": [{"name": "d", "devicePath": "/dev/d"}],
                "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1"}},
                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                "securityContext": {"privileged": true, "capabilities": {"add": ["NET_ADMIN"]}, "runAsUser": 0},
                "livenessProbe": {"httpGet": {"host": "h", "port": 80}}, "lifecycle": {"preStop": {"tcpSocket": {"host": "l", "port": 1}}}})
        };
        let pod = json!({"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [container("app"), container("two")], "initContainers": [container("init"), container("side")],
                "volumes": [{"name": "v", "hostPath": {"path": "/"}}], "hostNetwork": true, "priorityClassName": "high", "serviceAccountName": "sa",
                "securityContext": {"runAsNonRoot": false}, "overhead": {"cpu": "10m"}, "runtimeClassName": "rc",
                "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k", "namespaces": ["o"]}]}}}});
        let objects = [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "a"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": pod}}),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "a"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "serviceName": "s", "template": pod,
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "a"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"parallelism": 2, "template": pod}}}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"}, "spec": pod["spec"]}),
        ];
        for object in objects {
            let text = object.to_string();
            let whole = Kept::read(text.as_bytes(), false, None).unwrap().0;
            let lean = Kept::read(text.as_bytes(), true, None).unwrap().0;
            assert!(whole.to_string().contains("\"envFrom\"") && !lean.to_string().contains("\"envFrom\""), "{lean}");
            let decode = |v: Value| objects::decode(&Document { origin: Origin::new(String::from("t"), 1), value: v }).unwrap();
            assert_eq!(decode(lean), decode(whole), "{}", object["kind"]);
        }
    }

    /// The object of a review whose text is `object`, as the guard decodes it (lean, long
    /// container lists taken as they are read), and as the engine decodes its whole lean tree;
    /// and whether the lists were taken.
    fn decoded_both_ways(object: &str) -> (Result<objects::Object, String>, Result<objects::Object, String>, bool) {
        let body = format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","operation":"CREATE","object":{object}}}}}"#);
        let r = parse(body.into_bytes()).unwrap();
        let doc = |value| Document { origin: Origin::new("t", 1), value };
        let (v, lists) = r.lean_tree(r.object.clone()).unwrap();
        let taken = lists.is_some();
        let got = match lists {
            Some(lists) => objects::decode_with_lists(&doc(v), lists),
            None => objects::decode(&doc(v)),
        };
        let want = objects::decode(&doc(r.tree(r.object.clone(), true).unwrap()));
        (got.map_err(|e| e.to_string()), want.map_err(|e| e.to_string()), taken)
    }

    #[test]
    fn long_container_lists_are_taken_as_they_are_read_and_decoded_as_the_whole_tree() {
        let n = objects::MANY_CONTAINERS;
        let container = |i: usize| {
            json!({"name": format!("c{i}"), "image": "registry.example.com/app:1", "env": [{"name": "A", "value": "b"}], "ports": [{"containerPort": 80 + i % 3}],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": format!("{}m", 20 + i % 7)}}})
        };
        let many = |k: usize| Value::Array((0..k).map(container).collect());
        let with_bad = |k: usize, bad: usize, c: Value| {
            let mut list = many(k);
            list[bad] = c;
            list
        };
        let spec = |containers: Value, init: Value| json!({"hostNetwork": true, "containers": containers, "initContainers": init});
        let deployment = |s: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {}, "template": {"spec": s}}})
                .to_string()
        };
        let cronjob = |s: Value| {
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": s}}}}})
                .to_string()
        };
        let pod = |s: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": s}).to_string();
        let bad_name = json!({"image": "x"});
        let bad_quantity = json!({"name": "q", "resources": {"limits": {"memory": "1K"}}});
        let long_then_short = format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"selector":{{}},"template":{{"spec":{}}}}},"spec":{{"selector":{{}},"template":{{"spec":{}}}}}}}"#,
            spec(many(n + 2), many(1)),
            spec(many(2), many(1))
        );
        // (object, whether its lists are taken)
        let cases = [
            (deployment(spec(many(n + 1), many(2))), true),
            (deployment(spec(many(3), many(n + 1))), true),
            (deployment(spec(many(n), many(n))), false),
            (deployment(spec(json!({"not": "a list"}), many(n + 1))), true),
            (deployment(spec(with_bad(n + 5, n + 3, bad_name.clone()), with_bad(3, 1, bad_quantity.clone()))), true),
            (deployment(spec(with_bad(n + 5, 2, bad_quantity.clone()), many(1))), true),
            (cronjob(spec(many(n + 5), many(1))), true),
            (pod(spec(many(1), with_bad(n + 5, n + 4, bad_name))), true),
            (pod(spec(many(n + 5), Value::Null)), true),
            // The pod spec is not known to be there before the kind is read: nothing taken.
            (format!(r#"{{"spec":{},"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p"}}}}"#, spec(many(n + 5), many(1))), false),
            // A key on the way given twice: read again as a whole tree, where the later counts.
            (long_then_short, false),
        ];
        for (i, (object, taken)) in cases.into_iter().enumerate() {
            let (got, want, took) = decoded_both_ways(&object);
            assert_eq!(took, taken, "case {i}");
            assert_eq!(got, want, "case {i}");
        }
        // The request size limit measures the lists too: at the limit, and one byte past it.
        let base = deployment(spec(many(n + 1), many(1)));
        let lean_len = |object: &str| {
            let r = parse(format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{object}}}}}"#).into_bytes())
                .unwrap();
            serde_json::to_vec(&r.tree(r.object.clone(), true).unwrap()).unwrap().len()
        };
        let padded = |k: usize| base.replacen(r#""name":"web""#, &format!(r#""name":"web{}""#, "x".repeat(k)), 1);
        let short = objects::MAX_REQUEST_BODY_BYTES - lean_len(&padded(0));
        for (k, too_large) in [(short, false), (short + 1, true)] {
            let object = padded(k);
            assert_eq!(lean_len(&object), objects::MAX_REQUEST_BODY_BYTES + usize::from(too_large));
            let (got, want, took) = decoded_both_ways(&object);
            assert!(took);
            assert_eq!(got.as_ref().map(|o| o.meta.too_large), Ok(too_large));
            assert_eq!(got, want);
        }
    }

    #[test]
    fn only_created_or_changed_unowned_workloads_concern_the_guard() {
        let deploy = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}});
        let base =
            json!({"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": "CREATE", "namespace": "a", "object": deploy});
        let with = |f: &dyn Fn(&mut Value)| {
            let mut r = base.clone();
            f(&mut r);
            concerns(&parse(review(r)).unwrap())
        };
        assert!(with(&|_| {}));
        assert!(!with(&|r| r["kind"] = json!({"group": "", "version": "v1", "kind": "ConfigMap"})));
        assert!(!with(&|r| r["operation"] = json!("DELETE")));
        assert!(!with(&|r| r["object"]["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "Deployment", "name": "x"}])));
        assert!(!with(&|r| r["object"]["metadata"]["labels"] = json!({LABEL: "ignore"})));
        assert!(!with(&|r| {
            r["operation"] = json!("UPDATE");
            r["oldObject"] = r["object"].clone();
        }));
        assert!(with(&|r| {
            r["operation"] = json!("UPDATE");
            r["oldObject"] = json!({"metadata": {"name": "web"}, "spec": {"replicas": 1}});
        }));
    }

    /// The namespace shop of examples/autoscaling: quota compute (requests.cpu 4, limits.cpu 8,
    /// pods 10) and Deployment web running 5 pods of 500m/1 cpu.
    fn shop() -> ClusterState {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/autoscaling/state.yaml")).unwrap();
        let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", &text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
        ClusterState::from_objects(objs, "shop")
    }

    fn hpa_review(operation: &str, min: i64, old_min: Option<i64>) -> Request {
        hpa_review_with(operation, min, old_min, |_| {})
    }

    /// The review of an HPA of `deployment/web`, its object changed by `change`.
    fn hpa_review_with(operation: &str, min: i64, old_min: Option<i64>, change: impl Fn(&mut Value)) -> Request {
        let hpa = |min: i64| {
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": min, "maxReplicas": 20}})
        };
        let mut r = json!({"uid": "u", "kind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}, "operation": operation,
            "namespace": "shop", "object": hpa(min)});
        change(&mut r["object"]);
        if let Some(old) = old_min {
            r["oldObject"] = hpa(old);
        }
        parse(review(r)).unwrap()
    }

    #[test]
    fn an_autoscaler_is_answered_for_the_pods_of_the_workload_it_targets() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let refused = "quota compute will refuse 4 of the 12 pods of deployment/web: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4";
        let min12 = "HPA web scales deployment/web from 12 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): even its minimum of 12 is refused";
        let min3 = "HPA web scales deployment/web from 3 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): scale-ups past 8 will be refused";
        // (request, the target known, warnings)
        let cases: Vec<(Request, bool, Vec<&str>)> = vec![
            // Created with a minimum above what fits: the pods refused, and the ceiling.
            (hpa_review("CREATE", 12, None), true, vec![refused, min12]),
            // A minimum that fits: the ceiling alone.
            (hpa_review("CREATE", 3, None), true, vec![min3]),
            // Changed from 3 to 12: the new minimum decides, not the old one.
            (hpa_review("UPDATE", 12, Some(3)), true, vec![refused, min12]),
            // Changed from 12 to 3: the old minimum is gone.
            (hpa_review("UPDATE", 3, Some(12)), true, vec![min3]),
            // A target that could not be read: nothing is said.
            (hpa_review("CREATE", 12, None), false, vec![]),
        ];
        for (i, (req, known, want)) in cases.into_iter().enumerate() {
            assert!(concerns(&req), "case {i}");
            assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()), "case {i}");
            let mut state = shop();
            if !known {
                state.existing.clear();
            }
            let a = decide(req, state, &opts, false);
            assert_eq!(a.warnings, want, "case {i}");
        }
        // A change of the autoscaler's status or metadata only is not spoken about.
        assert!(!concerns(&hpa_review("UPDATE", 12, Some(12))));
        let keda =
            hpa_review_with("CREATE", 12, None, |o| o["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "ScaledObject", "name": "web"}]));
        assert!(!concerns(&keda), "the HPA KEDA makes for a ScaledObject is the ScaledObject's");
    }

    #[test]
    fn a_vpa_is_answered_for_the_running_pods_of_its_target() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let vpa = json!({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
            "status": {"recommendation": {"containerRecommendations": [{"containerName": "app", "target": {"cpu": "1200m"}}]}}});
        let req = parse(review(json!({"uid": "u", "kind": {"group": "autoscaling.k8s.io", "version": "v1", "kind": "VerticalPodAutoscaler"},
            "operation": "CREATE", "namespace": "shop", "object": vpa})))
        .unwrap();
        assert!(concerns(&req));
        assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()));
        let a = decide(req, shop(), &opts, false);
        assert_eq!(
            a.warnings,
            vec!["quota compute lets 3 of 5 pods of deployment/web be recreated at VPA web's target (limits.cpu=2400m, requests.cpu=1200m each): the other 2 stay evicted"]
        );
    }

    #[test]
    fn warnings_fit_the_servers_limits() {
        let long = "x".repeat(1000);
        let fitted = fit(vec![long.clone(); 40]);
        assert!(fitted.iter().all(|w| w.chars().count() <= MAX_WARNING_CHARS && w.ends_with("...")));
        assert!(fitted.iter().map(|w| w.chars().count()).sum::<usize>() <= MAX_TOTAL_CHARS);
        assert_eq!(fitted.len(), MAX_TOTAL_CHARS / MAX_WARNING_CHARS);
        let controls = fit(vec!["a\u{1b}[31mb\nc".into()]);
        assert!(!controls[0].chars().any(char::is_control), "{controls:?}");
        // The line and paragraph separators are line breaks to many readers: escaped too.
        assert_eq!(fit(vec!["a\u{2028}b\u{2029}c".into()]), ["a\\u2028b\\u2029c"]);
    }

    #[test]
    fn the_answer_is_an_admission_review() {
        let a = Answer { allowed: false, warnings: vec!["w".into()], message: Some("m".into()), why: Why::Denied, ceiling: None };
        let r = response("u1", &a);
        assert_eq!(r["response"]["uid"], "u1");
        assert_eq!(r["response"]["allowed"], false);
        assert_eq!(r["response"]["warnings"], json!(["w"]));
        assert_eq!(r["response"]["status"]["code"], 403);
        let ok = response("u2", &Answer { allowed: true, warnings: vec![], message: None, why: Why::Fits, ceiling: None });
        assert!(ok["response"].get("warnings").is_none() && ok["response"].get("status").is_none());
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;
    use serde_json::json;

    /// A namespace with quota compute (requests.cpu 1) and a MutatingAdmissionPolicy that adds a
    /// sidecar of 100m to every pod.
    fn injected() -> ClusterState {
        let text = "\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec: {hard: {requests.cpu: '1'}}
status: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: sidecar}
spec:
  reinvocationPolicy: Never
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: \"[JSONPatch{op: 'add', path: '/spec/containers/-', value: Object.spec.containers{name: 'proxy', image: 'p', resources: Object.spec.containers.resources{requests: {'cpu': '100m'}}}}]\"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: sidecar}
spec: {policyName: sidecar}
";
        let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
        ClusterState::from_objects(objs, "shop")
    }

    fn request(object: Value) -> Request {
        let kind = object["kind"].as_str().unwrap().to_string();
        let group = if kind == "Pod" { "" } else { "apps" };
        let r = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": group, "version": "v1", "kind": kind}, "operation": "CREATE", "namespace": "shop", "object": object}});
        parse(serde_json::to_vec(&r).unwrap()).unwrap()
    }

    #[test]
    fn where_a_policy_is_bound_it_reads_the_whole_pod() {
        let text = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-debug}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  validations:
  - expression: \"object.spec.containers.all(c, !has(c.env) || c.env.all(e, e.name != 'DEBUG'))\"
    message: no DEBUG
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-debug}
spec: {policyName: no-debug, validationActions: [Deny]}
";
        let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let deployment = |env: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "shop"}},
                    "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "app", "image": "x", "env": [{"name": env, "value": "1"}]}]}}}})
        };
        let a = decide(request(deployment("DEBUG")), ClusterState::from_objects(objs.clone(), "shop"), &opts, false);
        assert!(a.warnings.iter().any(|w| w.contains("no DEBUG")), "{:?}", a.warnings);
        let a = decide(request(deployment("OTHER")), ClusterState::from_objects(objs.clone(), "shop"), &opts, false);
        assert!(a.warnings.iter().all(|w| !w.contains("no DEBUG")), "{:?}", a.warnings);
        // Over the bound the policies are not replayed, and the answer says so: its pods are
        // decided by quota alone, in a time and memory linear in the object.
        let mut large = deployment("DEBUG");
        let containers: Vec<Value> = (0..POLICY_REPLAY_MAX_BYTES / 20).map(|i| json!({"name": format!("c{i}"), "image": "x"})).collect();
        large["spec"]["template"]["spec"]["containers"] = Value::Array(containers);
        let a = decide(request(large), ClusterState::from_objects(objs, "shop"), &opts, false);
        assert!(a.warnings.iter().all(|w| !w.contains("no DEBUG")), "{:?}", a.warnings);
        assert!(a.warnings.iter().any(|w| w.contains("admission policies were not replayed on this Deployment")), "{:?}", a.warnings);
    }

    #[test]
    fn a_workloads_pods_meet_the_policies_and_a_pod_is_taken_as_they_left_it() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let container = json!([{"name": "app", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]);
        let shop = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "shop"}},
                "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": container}}}});
        let a = decide(request(shop), injected(), &opts, false);
        assert!(a.warnings.iter().any(|w| w.contains("1 of the 4 pods") && w.contains("requested: requests.cpu=300m")), "{:?}", a.warnings);
        // The server ran the policies before calling the guard: the pod it sends has its
        // sidecar already, and is not given another.
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": container}});
        let a = decide(request(pod), injected(), &opts, false);
        assert!(a.warnings.iter().all(|w| !w.contains("300m")), "{:?}", a.warnings);
    }
}
