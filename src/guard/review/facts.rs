//! What [`super::concerns`] reads of an object, read without building it: readers that take
//! any JSON (a field of an unexpected type counts as absent, as it did when read from a tree),
//! and a 128-bit hash of a spec, which tells an update that changes nothing the guard reads.

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::hash::{BuildHasher, Hasher};

/// What [`super::concerns`] reads of an object: whether it is a map, names a controller among
/// its owners, carries the opt-out label, and a hash of its spec.
#[derive(Default)]
pub(super) struct ObjectFacts {
    pub(super) map: bool,
    pub(super) owned: bool,
    pub(super) opted_out: bool,
    /// `None`: no spec.
    pub(super) spec: Option<u128>,
}

impl<'de> serde::Deserialize<'de> for ObjectFacts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ObjectFacts, D::Error> {
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
                            let m = map.next_value::<Meta>()?;
                            (out.owned, out.opted_out) = (m.owned, m.opted_out);
                        }
                        "spec" => out.spec = Some(map.next_value::<Hash>()?.0),
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
