//! JSON documents read by serde_json, where that gives exactly the value the full YAML reader
//! gives (JSON is YAML, and was read only as YAML before): about ten times as fast, and a
//! `kind: List` is handed out an item at a time, so a state of a million devices in JSON is
//! never held as one tree of values (nor its items as a list of texts).
//!
//! Whatever could read otherwise in YAML is left to the full reader, as [`super::plain`]
//! leaves it: floating-point numbers (serde_json's default parse of a float may differ from
//! YAML's in the last digit), integers past `i64`, duplicate keys (an error in YAML), merge
//! keys (`"<<"`), keys past YAML's 1,024 characters, nesting deeper than [`MAX_DEPTH`], and
//! text with characters YAML handles in rules of its own (tabs, DEL, C1 controls, U+FFFE and
//! U+FFFF, escaped surrogates). The tests (`json/tests.rs`) hold every value read here to the
//! full reader's.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::large::Items;
use super::{Document, InputError, Origin};

/// Nesting read here; the full reader's limit ([`super::MAX_DEPTH`]) is higher, so nothing it
/// refuses for depth is read here.
const MAX_DEPTH: usize = 100;

/// Keys longer than this are the full reader's (YAML bounds implicit keys at 1,024 characters).
const MAX_KEY_BYTES: usize = 1000;

/// What [`read`] did with a JSON document.
pub(super) enum Read {
    /// The document, read whole (not a List): the caller hands it out.
    Value(Value),
    /// A List, its items handed out one at a time (or stopped, or failed after some).
    Items(Items),
    /// Not for this reader: the full reader reads the document, nothing handed out.
    Refused,
}

/// Reads one JSON document. A `kind: List` (or `*List`) whose `items` is an array is handed
/// out item by item, each with its item number, as [`super::emit`] would hand out its items;
/// anything else is returned whole.
pub(super) fn read(origin: &Origin, chunk: &str, each: &mut impl FnMut(Document) -> Result<(), InputError>) -> Read {
    if !fits(chunk) {
        return Read::Refused;
    }
    if chunk.trim_start().starts_with('{') {
        if let Some(items) = list(origin, chunk, each) {
            return Read::Items(items);
        }
    }
    match value(chunk, 0) {
        Some(v) => Read::Value(v),
        None => Read::Refused,
    }
}

/// A List's items handed out one by one; `None` when the document is not such a List (or is
/// not for this reader), nothing handed out then.
fn list(origin: &Origin, chunk: &str, each: &mut impl FnMut(Document) -> Result<(), InputError>) -> Option<Items> {
    // The top-level object's fields as their text (the items' text is found, not read), so
    // that `kind` is known wherever it stands; then the items are read from their text one at
    // a time, each dropped before the next is read.
    let fields: Fields = serde_json::from_str(chunk).ok()?;
    let kind = fields.0.get("kind").and_then(|v| serde_json::from_str::<String>(v.get()).ok())?;
    let items = fields.0.get("items")?;
    if !(kind == "List" || kind.ends_with("List")) || !items.get().starts_with('[') {
        return None;
    }
    // The other fields must read here too, as the whole document would be read.
    if fields.0.iter().any(|(k, v)| !key_read_here(k) || (k != "items" && value(v.get(), 1).is_none())) {
        return None;
    }
    let mut stream = Stream { origin, each, handed: 0, outcome: None };
    let mut de = serde_json::Deserializer::from_str(items.get());
    let read = de.deserialize_seq(&mut stream).and_then(|()| de.end());
    Some(match (stream.outcome, read) {
        (Some(outcome), _) => outcome,
        (None, Ok(())) => Items::Read,
        (None, Err(_)) => Items::Failed(stream.handed),
    })
}

/// A List's items, each read and handed out as soon as its text is read: how it ended, and
/// how many were handed out.
struct Stream<'a, F> {
    origin: &'a Origin,
    each: &'a mut F,
    handed: usize,
    outcome: Option<Items>,
}

impl<'de, F: FnMut(Document) -> Result<(), InputError>> Visitor<'de> for &mut Stream<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a List's items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // An item is two levels down: the document, then its `items`.
        while let Some(item) = seq.next_element_seed(Checked { depth: 2 }).inspect_err(|_| self.outcome = Some(Items::Failed(self.handed)))? {
            let o = Origin { item: Some(self.handed + 1), ..self.origin.clone() };
            if !item.is_object() {
                self.outcome = Some(Items::Stopped(InputError::at(&o, None, "a list item must be a mapping")));
                return Err(refused("stopped"));
            }
            if let Err(e) = (self.each)(Document { origin: o, value: item }) {
                self.outcome = Some(Items::Stopped(e));
                return Err(refused("stopped"));
            }
            self.handed += 1;
        }
        Ok(())
    }
}

/// One JSON text as a value, `depth` levels down in its document; `None` where the full
/// reader could read it otherwise.
fn value(text: &str, depth: usize) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Checked { depth }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// Whether a key means here what it means to the full reader.
fn key_read_here(k: &str) -> bool {
    k.len() <= MAX_KEY_BYTES && k != "<<"
}

/// Whether the text has none of the characters YAML treats by rules of its own.
fn fits(text: &str) -> bool {
    let b = text.as_bytes();
    let odd = |i: usize| match b[i] {
        b'\t' | 0x7f => true,
        // U+0080..U+009F (C1 controls)
        0xc2 => b.get(i + 1).is_some_and(|c| (0x80..0xa0).contains(c)),
        // U+FFFE, U+FFFF
        0xef => b.get(i + 1) == Some(&0xbf) && b.get(i + 2).is_some_and(|c| *c >= 0xbe),
        // `\uD800`..`\uDFFF`: a surrogate, escaped
        b'\\' => {
            b.get(i + 1) == Some(&b'u')
                && b.get(i + 2).is_some_and(|c| c.eq_ignore_ascii_case(&b'd'))
                && b.get(i + 3).is_some_and(|c| matches!(c, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
        }
        _ => false,
    };
    !(0..b.len()).any(odd)
}

/// A document's top-level fields, each as its text; a key given twice is refused.
struct Fields<'a>(BTreeMap<String, &'a RawValue>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut fields = BTreeMap::new();
                while let Some(k) = map.next_key::<String>()? {
                    let v: &'a RawValue = map.next_value()?;
                    if fields.insert(k, v).is_some() {
                        return Err(refused("a key given twice"));
                    }
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// A value built as serde_json builds it, refusing what the full reader could read otherwise.
struct Checked {
    depth: usize,
}

fn refused<E: de::Error>(why: &str) -> E {
    E::custom(why)
}

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        if i64::try_from(n).is_err() {
            return Err(refused("an integer past i64"));
        }
        Ok(Value::from(n))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Value, E> {
        Err(refused("a float"))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(refused("nested too deep"));
        }
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Checked { depth })? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(refused("nested too deep"));
        }
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if !key_read_here(&k) {
                return Err(refused("a key the full reader reads by rules of its own"));
            }
            let v = map.next_value_seed(Checked { depth })?;
            if out.insert(k, v).is_some() {
                return Err(refused("a key given twice"));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests;
