//! Kubernetes' CEL quantity library over the engine's exact [`Quantity`]: `quantity(s)`,
//! `isQuantity(s)`, `sign`, `isGreaterThan`, `isLessThan`, `compareTo`, `add` and `sub` (of a
//! quantity or an int), `isInteger`, `asInteger` and `asApproximateFloat`. Arithmetic and
//! comparisons are exact; only `asApproximateFloat` goes through a double. Two quantities are
//! `==` when their values are equal, whatever their formats (`quantity('1k') ==
//! quantity('1000')`); `<` and the other operators are not defined on them, as upstream.

use std::cmp::Ordering;

use super::CelResult;
use cel::common::types::{CelBool, CelDouble, CelInt, CelString, Kind, Type, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use crate::quantity::{Format, Quantity};

/// The CEL type of a quantity, named as upstream names it.
pub(super) static QUANTITY_TYPE: Type = Type::simple_type(Kind::Opaque, "kubernetes.Quantity");

/// A quantity as a CEL value.
#[derive(Debug, Clone)]
pub(super) struct QuantityVal(pub(super) Quantity);

super::opaque_val!(QuantityVal, QUANTITY_TYPE, |a, b| a.0 == b.0);

fn quantity_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a Quantity, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<QuantityVal>()).map(|q| &q.0).ok_or_else(|| ExecutionError::function_error(function, "expected a quantity"))
}

fn string_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a str, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| ExecutionError::function_error(function, "expected a string"))
}

fn int_arg(function: &str, args: &[CowVal<'_, '_>], i: usize) -> Result<i64, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<CelInt>()).map(|n| *n.inner()).ok_or_else(|| ExecutionError::function_error(function, "expected an int"))
}

fn owned<'b, 'v, T: Val + 'v>(v: T) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(v))
}

fn quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let s = string_arg("quantity", &args, 0)?;
    let q = Quantity::parse(s).map_err(|e| ExecutionError::function_error("quantity", e))?;
    owned(QuantityVal(q))
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let s = string_arg("isQuantity", &args, 0)?;
    owned(CelBool::from(Quantity::parse(s).is_ok()))
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelInt::from(i64::from(quantity_arg("sign", &args, 0)?.sign())))
}

fn compare(function: &str, args: &[CowVal<'_, '_>]) -> Result<Ordering, ExecutionError> {
    Ok(quantity_arg(function, args, 0)?.cmp(quantity_arg(function, args, 1)?))
}

fn is_greater_than<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelBool::from(compare("isGreaterThan", &args)? == Ordering::Greater))
}

fn is_less_than<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelBool::from(compare("isLessThan", &args)? == Ordering::Less))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelInt::from(compare("compareTo", &args)? as i64))
}

/// An int operand, as upstream converts it: a DecimalExponent quantity.
fn int_as_quantity(function: &str, args: &[CowVal<'_, '_>]) -> Result<Quantity, ExecutionError> {
    Ok(Quantity::from_int(int_arg(function, args, 1)?, Format::DecimalExponent))
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(QuantityVal(quantity_arg("add", &args, 0)?.add(quantity_arg("add", &args, 1)?)))
}

fn add_int<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(QuantityVal(quantity_arg("add", &args, 0)?.add(&int_as_quantity("add", &args)?)))
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(QuantityVal(quantity_arg("sub", &args, 0)?.sub(quantity_arg("sub", &args, 1)?)))
}

fn sub_int<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(QuantityVal(quantity_arg("sub", &args, 0)?.sub(&int_as_quantity("sub", &args)?)))
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelBool::from(quantity_arg("isInteger", &args, 0)?.as_i64().is_some()))
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let v = quantity_arg("asInteger", &args, 0)?.as_i64().ok_or_else(|| ExecutionError::function_error("asInteger", "cannot convert value to integer"))?;
    owned(CelInt::from(v))
}

fn as_approximate_float<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelDouble::from(quantity_arg("asApproximateFloat", &args, 0)?.approximate_f64()))
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    let q = || QUANTITY_TYPE.to_owned();
    env.add_type(q())?;
    env.add_overload("quantity", "string_to_quantity", vec![STRING_TYPE], quantity)?;
    env.add_overload("isQuantity", "is_quantity_string", vec![STRING_TYPE], is_quantity)?;
    // Upstream declares `sign` as a global function; both spellings are accepted.
    env.add_overload("sign", "quantity_sign", vec![q()], sign)?;
    env.add_member_overload("sign", "quantity_sign_member", q(), vec![], sign)?;
    env.add_member_overload("isGreaterThan", "quantity_is_greater_than", q(), vec![q()], is_greater_than)?;
    env.add_member_overload("isLessThan", "quantity_is_less_than", q(), vec![q()], is_less_than)?;
    env.add_member_overload("compareTo", "quantity_compare_to", q(), vec![q()], compare_to)?;
    env.add_member_overload("add", "quantity_add", q(), vec![q()], add)?;
    env.add_member_overload("add", "quantity_add_int", q(), vec![INT_TYPE], add_int)?;
    env.add_member_overload("sub", "quantity_sub", q(), vec![q()], sub)?;
    env.add_member_overload("sub", "quantity_sub_int", q(), vec![INT_TYPE], sub_int)?;
    env.add_member_overload("isInteger", "quantity_is_integer", q(), vec![], is_integer)?;
    env.add_member_overload("asInteger", "quantity_get_int", q(), vec![], as_integer)?;
    env.add_member_overload("asApproximateFloat", "quantity_get_float", q(), vec![], as_approximate_float)?;
    Ok(())
}
