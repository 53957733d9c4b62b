//! Resource lists (`name -> quantity` maps) and the set operations quota admission uses on them.
//!
//! A [`ResourceList`] is ordered by name with Go's byte-wise string order, which is the order
//! the API server prints lists in its messages.
//!
//! ```
//! use kubectl_quota_engine::resources::{pretty_print, ResourceList};
//! use kubectl_quota_engine::quantity::Quantity;
//!
//! let mut used = ResourceList::new();
//! used.insert("requests.cpu".into(), Quantity::parse("500m").unwrap());
//! used.insert("pods".into(), Quantity::parse("1").unwrap());
//! assert_eq!(pretty_print(&used), "pods=1,requests.cpu=500m");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::quantity::Quantity;

/// Resource name to quantity, sorted by name.
pub type ResourceList = BTreeMap<String, Quantity>;

/// The names `a` and `b` both have, with both values, in name order: one walk along the two
/// sorted lists instead of a lookup in `b` per name of `a`.
///
/// ```
/// use kubectl_quota_engine::quantity::Quantity;
/// use kubectl_quota_engine::resources::{common, ResourceList};
///
/// let list = |names: &[&str]| names.iter().map(|n| (n.to_string(), Quantity::parse("1").unwrap())).collect::<ResourceList>();
/// let (a, b) = (list(&["cpu", "memory", "pods"]), list(&["count/pods", "memory", "pods", "services"]));
/// let names: Vec<&str> = common(&a, &b).map(|(k, _, _)| k.as_str()).collect();
/// assert_eq!(names, ["memory", "pods"]);
/// ```
pub fn common<'a, A, B>(a: &'a BTreeMap<String, A>, b: &'a BTreeMap<String, B>) -> impl Iterator<Item = (&'a String, &'a A, &'a B)> {
    let mut b = Cursor::new(b);
    a.iter().filter_map(move |(k, va)| b.seek(k).map(|vb| (k, va, vb)))
}

/// Looks up names given in ascending order, walking the list once instead of searching it
/// for each.
///
/// ```
/// use kubectl_quota_engine::resources::Cursor;
/// use std::collections::BTreeMap;
///
/// let list: BTreeMap<String, u32> = [("cpu".to_string(), 1), ("pods".to_string(), 2)].into();
/// let mut at = Cursor::new(&list);
/// assert_eq!(at.seek("count/pods"), None);
/// assert_eq!(at.seek("pods"), Some(&2));
/// ```
pub struct Cursor<'a, V> {
    rest: std::collections::btree_map::Iter<'a, String, V>,
    /// The first entry not passed yet.
    at: Option<(&'a String, &'a V)>,
}

impl<'a, V> Cursor<'a, V> {
    pub fn new(list: &'a BTreeMap<String, V>) -> Self {
        let mut rest = list.iter();
        let at = rest.next();
        Cursor { rest, at }
    }

    /// The value of `name`, which must not sort before the name sought last.
    pub fn seek(&mut self, name: &str) -> Option<&'a V> {
        while let Some((k, v)) = self.at {
            // Most names sought are there: equal lengths and bytes settle it without ordering.
            if k.len() == name.len() && k.as_bytes() == name.as_bytes() {
                return Some(v);
            }
            if k.as_str() > name {
                return None;
            }
            self.at = self.rest.next();
        }
        None
    }
}

/// `quota.Add`: the union of keys; values present on both sides are summed
/// (the left value is the receiver, so a zero left side takes the right side's format).
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = a.clone();
    add_into(&mut out, b);
    out
}

/// [`add`] in place: `into += b`, allocating only for names new to `into`.
pub fn add_into(into: &mut ResourceList, b: &ResourceList) {
    for (k, v) in b {
        match into.get_mut(k) {
            Some(existing) => *existing = existing.add(v),
            None => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `quota.SubtractWithNonNegativeResult`: `a - b` per key of `a`, clamped at zero.
/// Keys only in `b` appear with zero.
pub fn subtract_non_negative(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    for (k, v) in a {
        let d = match b.get(k) {
            Some(other) => v.sub(other),
            None => v.clone(),
        };
        out.insert(k.clone(), if d.sign() <= 0 { Quantity::zero() } else { d });
    }
    for k in b.keys() {
        out.entry(k.clone()).or_insert_with(Quantity::zero);
    }
    out
}

/// `quota.Mask`: only the keys of `list` that are in `names`.
pub fn mask<'a, I>(list: &ResourceList, names: I) -> ResourceList
where
    I: IntoIterator<Item = &'a String>,
{
    let mut out = ResourceList::new();
    for n in names {
        if let Some(v) = list.get(n) {
            out.insert(n.clone(), v.clone());
        }
    }
    out
}

/// `quota.RemoveZeros`.
pub fn remove_zeros(list: &ResourceList) -> ResourceList {
    list.iter().filter(|(_, v)| !v.is_zero()).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// `quota.IsNegative`: the names whose value is below zero.
pub fn negative_names(list: &ResourceList) -> Vec<String> {
    list.iter().filter(|(_, v)| v.sign() < 0).map(|(k, _)| k.clone()).collect()
}

/// `quota.LessThanOrEqual`: compares only keys present on both sides and returns the names
/// where `a > b` (empty when `a <= b`).
pub fn exceeded(a: &ResourceList, b: &ResourceList) -> BTreeSet<String> {
    a.iter()
        .filter_map(|(k, v)| match b.get(k) {
            Some(limit) if v > limit => Some(k.clone()),
            _ => None,
        })
        .collect()
}

/// The keys of a list as a set.
pub fn names(list: &ResourceList) -> BTreeSet<String> {
    list.keys().cloned().collect()
}

/// The server's `prettyPrint`: `k=v` sorted by key, joined with `,`.
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// The server's `prettyPrintResourceNames`: names sorted, joined with `,`.
pub fn pretty_print_names<S: AsRef<str>, I: IntoIterator<Item = S>>(names: I) -> String {
    let mut v: Vec<S> = names.into_iter().collect();
    v.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
    v.dedup_by(|a, b| a.as_ref() == b.as_ref());
    v.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    #[test]
    fn cursor_finds_names_sought_in_order_as_a_lookup_would() {
        let l = list(&[("cpu", "1"), ("limits.cpu", "2"), ("pods", "3"), ("requests.cpu", "4"), ("requests.memory", "5")]);
        // Names in ascending order, present and absent, before, between and after the entries,
        // with shared prefixes and equal lengths.
        let sought: &[&[&str]] = &[
            &["cpu", "limits.cpu", "pods", "requests.cpu", "requests.memory"],
            &["a", "cpu", "cpuz", "limits.cpt", "limits.cpu", "memory", "requests.memory", "zzz"],
            &["pods"],
            &["requests.cpu", "requests.cpu", "requests.memorz"],
            &["count/pods", "limits.memory", "requests.storage"],
            &[],
        ];
        for names in sought {
            let mut at = Cursor::new(&l);
            for n in *names {
                assert_eq!(at.seek(n), l.get(*n), "{n} in {names:?}");
            }
        }
    }

    #[test]
    fn add_unions_keys_and_sums_shared_ones() {
        let cases = [
            (vec![("a", "1")], vec![("a", "500m")], "a=1500m"),
            (vec![("a", "1")], vec![("b", "2")], "a=1,b=2"),
            (vec![("m", "0")], vec![("m", "1Gi")], "m=1Gi"),
            (vec![("m", "3Gi")], vec![("m", "1G")], "m=4221225472"),
        ];
        for (a, b, want) in cases {
            assert_eq!(pretty_print(&add(&list(&a), &list(&b))), want);
        }
    }

    #[test]
    fn subtract_clamps_at_zero_and_keeps_keys_of_both_sides() {
        let got = subtract_non_negative(&list(&[("a", "1"), ("b", "2")]), &list(&[("a", "2"), ("c", "1")]));
        assert_eq!(pretty_print(&got), "a=0,b=2,c=0");
    }

    #[test]
    fn exceeded_compares_only_shared_keys() {
        let got = exceeded(&list(&[("a", "2"), ("b", "5")]), &list(&[("a", "1")]));
        assert_eq!(got.into_iter().collect::<Vec<_>>(), vec!["a".to_string()]);
        assert!(exceeded(&list(&[("a", "1k")]), &list(&[("a", "1000")])).is_empty());
    }

    #[test]
    fn pretty_print_sorts_bytewise() {
        let l = list(&[("requests.cpu", "1"), ("limits.memory", "2Gi"), ("count/pods", "1")]);
        assert_eq!(pretty_print(&l), "count/pods=1,limits.memory=2Gi,requests.cpu=1");
        let names = ["b".to_string(), "a".to_string(), "a".to_string()];
        assert_eq!(pretty_print_names(names.iter()), "a,b");
    }
}
