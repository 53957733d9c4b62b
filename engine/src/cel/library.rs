//! Kubernetes' list, regex and sets libraries:
//!
//! * lists: `l.isSorted()`, `l.sum()`, `l.min()`, `l.max()`, `l.indexOf(x)`, `l.lastIndexOf(x)`;
//! * regex: `s.find(re)`, `s.findAll(re)`, `s.findAll(re, n)`;
//! * sets: `sets.contains(a, b)`, `sets.equivalent(a, b)`, `sets.intersects(a, b)`.

use std::cmp::Ordering;

use super::{error, CelResult};
use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelString, CelUInt, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The elements of the list argument `i`.
fn list_arg<'a, 'v>(function: &str, args: &'a [CowVal<'_, 'v>], i: usize) -> Result<Vec<&'a (dyn Val + 'v)>, ExecutionError> {
    let list = args.get(i).ok_or_else(|| error(function, "missing argument"))?;
    let iterable = list.as_iterable().ok_or_else(|| error(function, "expected a list"))?;
    let mut iter = iterable.iter();
    let mut items = Vec::new();
    while let Some(item) = iter.next() {
        items.push(item);
    }
    Ok(items)
}

fn cmp(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| error(function, format!("values of type {} cannot be ordered", a.get_type().name())))?
        .compare(b)
        .map_err(|_| error(function, format!("a {} cannot be compared with a {}", a.get_type().name(), b.get_type().name())))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let items = list_arg("isSorted", &args, 0)?;
    for pair in items.windows(2) {
        if cmp("isSorted", pair[0], pair[1])? == Ordering::Greater {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

fn extreme<'b, 'v>(function: &str, args: &[CowVal<'b, 'v>], keep: Ordering) -> CelResult<'b, 'v> {
    let items = list_arg(function, args, 0)?;
    let mut best = *items.first().ok_or_else(|| error(function, format!("{function} called on empty list")))?;
    for &item in &items[1..] {
        if cmp(function, item, best)? == keep {
            best = item;
        }
    }
    Ok(CowVal::Owned(best.clone_as_boxed()))
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    extreme("min", &args, Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    extreme("max", &args, Ordering::Greater)
}

/// The sum of a list of ints, uints or doubles; `0` for an empty list. Overflow is an error.
fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let items = list_arg("sum", &args, 0)?;
    let overflow = || error("sum", "integer overflow");
    let mismatch = |v: &dyn Val| error("sum", format!("cannot add a {} to the sum", v.get_type().name()));
    match items.first() {
        None => Ok(CowVal::owned(CelInt::from(0))),
        Some(first) if first.downcast_ref::<CelInt>().is_some() => {
            let mut total: i64 = 0;
            for v in &items {
                let n = v.downcast_ref::<CelInt>().ok_or_else(|| mismatch(*v))?;
                total = total.checked_add(*n.inner()).ok_or_else(overflow)?;
            }
            Ok(CowVal::owned(CelInt::from(total)))
        }
        Some(first) if first.downcast_ref::<CelUInt>().is_some() => {
            let mut total: u64 = 0;
            for v in &items {
                let n = v.downcast_ref::<CelUInt>().ok_or_else(|| mismatch(*v))?;
                total = total.checked_add(*n.inner()).ok_or_else(overflow)?;
            }
            Ok(CowVal::owned(CelUInt::from(total)))
        }
        Some(first) if first.downcast_ref::<CelDouble>().is_some() => {
            let mut total = 0.0;
            for v in &items {
                total += *v.downcast_ref::<CelDouble>().ok_or_else(|| mismatch(*v))?.inner();
            }
            Ok(CowVal::owned(CelDouble::from(total)))
        }
        Some(first) => Err(mismatch(*first)),
    }
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let items = list_arg("indexOf", &args, 0)?;
    let x = args.get(1).ok_or_else(|| error("indexOf", "missing argument"))?;
    let i = items.iter().position(|v| v.equals(x.as_ref())).map_or(-1, |i| i as i64);
    Ok(CowVal::owned(CelInt::from(i)))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let items = list_arg("lastIndexOf", &args, 0)?;
    let x = args.get(1).ok_or_else(|| error("lastIndexOf", "missing argument"))?;
    let i = items.iter().rposition(|v| v.equals(x.as_ref())).map_or(-1, |i| i as i64);
    Ok(CowVal::owned(CelInt::from(i)))
}

/// Compiled patterns are bounded: a hostile pattern cannot take much memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

fn string_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a str, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| error(function, "expected a string"))
}

fn regex(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::RegexBuilder::new(pattern).size_limit(REGEX_SIZE_LIMIT).build().map_err(|e| error(function, format!("invalid regular expression {pattern:?}: {e}")))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let s = string_arg("find", &args, 0)?;
    let re = regex("find", string_arg("find", &args, 1)?)?;
    let found = re.find(s).map_or("", |m| m.as_str()).to_owned();
    Ok(CowVal::owned(CelString::from(found)))
}

fn find_all_limited<'b, 'v>(args: &[CowVal<'b, 'v>], limit: i64) -> CelResult<'b, 'v> {
    let s = string_arg("findAll", args, 0)?;
    let re = regex("findAll", string_arg("findAll", args, 1)?)?;
    let take = if limit < 0 { usize::MAX } else { usize::try_from(limit).unwrap_or(usize::MAX) };
    let found: Vec<Box<dyn Val + 'v>> = re.find_iter(s).take(take).map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val + 'v>).collect();
    Ok(CowVal::owned(CelList::from(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    find_all_limited(&args, -1)
}

fn find_all_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let n = args.get(2).and_then(|a| a.downcast_ref::<CelInt>()).map(|n| *n.inner()).ok_or_else(|| error("findAll", "expected an int"))?;
    find_all_limited(&args, n)
}

/// Whether every element of `b` is in `a`.
fn contains_all(a: &[&dyn Val], b: &[&dyn Val]) -> bool {
    b.iter().all(|x| a.iter().any(|y| y.equals(*x)))
}

fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let (a, b) = (list_arg("sets.contains", &args, 0)?, list_arg("sets.contains", &args, 1)?);
    Ok(CowVal::owned(CelBool::from(contains_all(&a, &b))))
}

fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let (a, b) = (list_arg("sets.equivalent", &args, 0)?, list_arg("sets.equivalent", &args, 1)?);
    Ok(CowVal::owned(CelBool::from(contains_all(&a, &b) && contains_all(&b, &a))))
}

fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let (a, b) = (list_arg("sets.intersects", &args, 0)?, list_arg("sets.intersects", &args, 1)?);
    Ok(CowVal::owned(CelBool::from(b.iter().any(|x| a.iter().any(|y| y.equals(*x))))))
}

/// Registers the three libraries on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload("indexOf", "list_index_of", LIST_TYPE, vec![DYN_TYPE], index_of)?;
    env.add_member_overload("lastIndexOf", "list_last_index_of", LIST_TYPE, vec![DYN_TYPE], last_index_of)?;
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload("findAll", "string_find_all", STRING_TYPE, vec![STRING_TYPE], find_all)?;
    env.add_member_overload("findAll", "string_find_all_n", STRING_TYPE, vec![STRING_TYPE, INT_TYPE], find_all_n)?;
    env.add_overload("sets.contains", "list_sets_contains_list", vec![LIST_TYPE, LIST_TYPE], sets_contains)?;
    env.add_overload("sets.equivalent", "list_sets_equivalent_list", vec![LIST_TYPE, LIST_TYPE], sets_equivalent)?;
    env.add_overload("sets.intersects", "list_sets_intersects_list", vec![LIST_TYPE, LIST_TYPE], sets_intersects)?;
    Ok(())
}
