//! The pruning reader: an object read into a tree without what deciding never reads, and a
//! lean tree's long container lists decoded one container at a time as they are read.

use kubectl_quota_engine::objects::{self, ContainerList, ContainerLists};
use serde_json::Value;
use std::cell::RefCell;

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
pub(super) struct Kept(pub(super) Value);

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
pub(super) struct Taking {
    api_version: Option<String>,
    kind: Option<String>,
    /// The pod spec's field path (`spec.template.spec`), once on the way to it.
    path: Option<&'static str>,
    /// The lists of the pod spec being read that were long, taken (containers, init containers).
    long: [Option<ContainerList>; 2],
    /// The pod spec's lists, once it is read with one of them long.
    pub(super) lists: Option<ContainerLists>,
    pub(super) twice: bool,
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
    pub(super) fn read(text: &[u8], lean: bool, taking: Option<&RefCell<Taking>>) -> serde_json::Result<Kept> {
        let mut d = serde_json::Deserializer::from_slice(text);
        let v = serde::de::DeserializeSeed::deserialize(Prune { at: At::Top, lean, taking }, &mut d)?;
        d.end()?;
        Ok(Kept(v))
    }
}
