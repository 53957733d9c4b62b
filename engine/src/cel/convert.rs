//! Values in and out: JSON documents to CEL values, CEL results back to JSON, and a deep copy
//! that lets a variable's value outlive the evaluation that made it.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelBytes, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelOptional, CelString, CelStruct, CelType, CelUInt};
use cel::common::value::{CowVal, Val};
use serde_json::Value as Json;

use super::format::FormatVal;
use super::net::{CidrVal, IpVal};
use super::quantity::QuantityVal;
use super::semver::SemverVal;
use super::url::UrlVal;

/// Deeper JSON than this is refused (serde_json itself stops at 128 when parsing).
const MAX_DEPTH: usize = 256;

/// A result larger than this many JSON nodes plus string bytes is refused.
pub(super) const MAX_RESULT_SIZE: usize = 16 << 20;

/// A JSON document as a CEL value: objects become maps with string keys, arrays lists,
/// integers `int` (beyond i64, `uint`, then `double`), other numbers `double`.
pub(super) fn json_to_val(v: &Json) -> Result<Box<dyn Val + 'static>, String> {
    json_to_val_at(v, 0)
}

fn json_to_val_at(v: &Json, depth: usize) -> Result<Box<dyn Val + 'static>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("the document is nested deeper than {MAX_DEPTH} levels"));
    }
    Ok(match v {
        Json::Null => Box::new(CelNull),
        Json::Bool(b) => Box::new(CelBool::from(*b)),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Box::new(CelInt::from(i))
            } else if let Some(u) = n.as_u64() {
                Box::new(CelUInt::from(u))
            } else {
                Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN)))
            }
        }
        Json::String(s) => Box::new(CelString::from(s.clone())),
        Json::Array(items) => {
            let items = items.iter().map(|i| json_to_val_at(i, depth + 1)).collect::<Result<Vec<_>, _>>()?;
            Box::new(CelList::from(items))
        }
        Json::Object(fields) => {
            let mut map: HashMap<CelMapKey<'static>, Box<dyn Val>> = HashMap::with_capacity(fields.len());
            for (k, v) in fields {
                map.insert(CelMapKey::from(k.clone()), json_to_val_at(v, depth + 1)?);
            }
            Box::new(CelMap::from(map))
        }
    })
}

/// A CEL value as JSON. See the module documentation of `cel` for the mapping.
pub(super) fn val_to_json(v: &dyn Val) -> Result<Json, String> {
    let mut budget = MAX_RESULT_SIZE;
    val_to_json_at(v, 0, &mut budget)
}

fn spend(budget: &mut usize, n: usize) -> Result<(), String> {
    *budget = budget.checked_sub(n).ok_or_else(|| format!("the result is larger than {MAX_RESULT_SIZE} bytes"))?;
    Ok(())
}

fn val_to_json_at(v: &dyn Val, depth: usize, budget: &mut usize) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!("the result is nested deeper than {MAX_DEPTH} levels"));
    }
    spend(budget, 1)?;
    if let Some(b) = v.downcast_ref::<CelBool>() {
        return Ok(Json::Bool(*b.inner()));
    }
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Ok(Json::from(*i.inner()));
    }
    if let Some(u) = v.downcast_ref::<CelUInt>() {
        return Ok(Json::from(*u.inner()));
    }
    if let Some(d) = v.downcast_ref::<CelDouble>() {
        return serde_json::Number::from_f64(*d.inner()).map(Json::Number).ok_or_else(|| format!("the double {} has no JSON representation", d.inner()));
    }
    if let Some(s) = v.downcast_ref::<CelString>() {
        spend(budget, s.inner().len())?;
        return Ok(Json::String(s.inner().to_owned()));
    }
    if let Some(b) = v.downcast_ref::<CelBytes>() {
        spend(budget, b.inner().len() * 4 / 3 + 4)?;
        return Ok(Json::String(base64(b.inner())));
    }
    if v.downcast_ref::<CelNull>().is_some() {
        return Ok(Json::Null);
    }
    if let Some(q) = v.downcast_ref::<QuantityVal>() {
        return Ok(Json::String(q.0.to_canonical()));
    }
    if let Some(ip) = v.downcast_ref::<IpVal>() {
        return Ok(Json::String(ip.0.to_string()));
    }
    if let Some(cidr) = v.downcast_ref::<CidrVal>() {
        return Ok(Json::String(cidr.0.to_string()));
    }
    if let Some(url) = v.downcast_ref::<UrlVal>() {
        return Ok(Json::String(url.0.to_string()));
    }
    if let Some(version) = v.downcast_ref::<SemverVal>() {
        return Ok(Json::String(version.0.to_string()));
    }
    if let Some(list) = v.downcast_ref::<CelList>() {
        let items = list.inner().iter().map(|i| val_to_json_at(i.as_ref(), depth + 1, budget)).collect::<Result<_, _>>()?;
        return Ok(Json::Array(items));
    }
    if let Some(map) = v.downcast_ref::<CelMap>() {
        let mut out = serde_json::Map::with_capacity(map.inner().len());
        for (k, v) in map.inner() {
            let key = match val_to_json_at(k.inner(), depth + 1, budget)? {
                Json::String(s) => s,
                other => other.to_string(),
            };
            out.insert(key, val_to_json_at(v.as_ref(), depth + 1, budget)?);
        }
        return Ok(Json::Object(out));
    }
    if let Some(s) = v.downcast_ref::<CelStruct>() {
        let mut out = serde_json::Map::new();
        for (k, v) in s.field_values() {
            let v = val_to_json_at(v.as_ref(), depth + 1, budget)?;
            out.insert(k, v);
        }
        return Ok(Json::Object(out));
    }
    if let Some(o) = v.downcast_ref::<CelOptional>() {
        return match o.option() {
            None => Ok(Json::Null),
            Some(inner) => val_to_json_at(inner, depth + 1, budget),
        };
    }
    if let Some(t) = v.downcast_ref::<CelType>() {
        return Ok(Json::String(t.name().to_owned()));
    }
    Err(format!("a value of type {} has no JSON representation", v.get_type().name()))
}

/// A copy of `v` that borrows nothing, so that it can be kept after its evaluation ends.
pub(super) fn to_static(v: &dyn Val) -> Result<Box<dyn Val + 'static>, String> {
    to_static_at(v, 0)
}

fn to_static_at(v: &dyn Val, depth: usize) -> Result<Box<dyn Val + 'static>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("the value is nested deeper than {MAX_DEPTH} levels"));
    }
    if let Some(b) = v.downcast_ref::<CelBool>() {
        return Ok(Box::new(CelBool::from(*b.inner())));
    }
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Ok(Box::new(CelInt::from(*i.inner())));
    }
    if let Some(u) = v.downcast_ref::<CelUInt>() {
        return Ok(Box::new(CelUInt::from(*u.inner())));
    }
    if let Some(d) = v.downcast_ref::<CelDouble>() {
        return Ok(Box::new(CelDouble::from(*d.inner())));
    }
    if let Some(s) = v.downcast_ref::<CelString>() {
        return Ok(Box::new(CelString::from(s.inner().to_owned())));
    }
    if let Some(b) = v.downcast_ref::<CelBytes>() {
        return Ok(Box::new(CelBytes::from(b.inner().to_vec())));
    }
    if v.downcast_ref::<CelNull>().is_some() {
        return Ok(Box::new(CelNull));
    }
    if let Some(q) = v.downcast_ref::<QuantityVal>() {
        return Ok(Box::new(q.clone()));
    }
    if let Some(ip) = v.downcast_ref::<IpVal>() {
        return Ok(Box::new(ip.clone()));
    }
    if let Some(cidr) = v.downcast_ref::<CidrVal>() {
        return Ok(Box::new(cidr.clone()));
    }
    if let Some(url) = v.downcast_ref::<UrlVal>() {
        return Ok(Box::new(url.clone()));
    }
    if let Some(version) = v.downcast_ref::<SemverVal>() {
        return Ok(Box::new(version.clone()));
    }
    if let Some(format) = v.downcast_ref::<FormatVal>() {
        return Ok(Box::new(format.clone()));
    }
    if let Some(list) = v.downcast_ref::<CelList>() {
        let items = list.inner().iter().map(|i| to_static_at(i.as_ref(), depth + 1)).collect::<Result<Vec<_>, _>>()?;
        return Ok(Box::new(CelList::from(items)));
    }
    if let Some(map) = v.downcast_ref::<CelMap>() {
        let mut out: HashMap<CelMapKey<'static>, Box<dyn Val>> = HashMap::with_capacity(map.inner().len());
        for (k, v) in map.inner() {
            out.insert(k.clone().into_static(), to_static_at(v.as_ref(), depth + 1)?);
        }
        return Ok(Box::new(CelMap::from(out)));
    }
    if let Some(s) = v.downcast_ref::<CelStruct>() {
        let mut out = CelStruct::new(s.name().to_owned());
        for (k, v) in s.field_values() {
            out.add_field_value(k, CowVal::Owned(to_static_at(v.as_ref(), depth + 1)?));
        }
        return Ok(Box::new(out));
    }
    if let Some(o) = v.downcast_ref::<CelOptional>() {
        return Ok(Box::new(match o.option() {
            None => CelOptional::none(),
            Some(inner) => CelOptional::of(to_static_at(inner, depth + 1)?),
        }));
    }
    if let Some(t) = v.downcast_ref::<CelType>() {
        return Ok(Box::new(CelType::new(t.name().to_owned())));
    }
    Err(format!("a value of type {} cannot be kept in a variable", v.get_type().name()))
}

/// Standard base64 with padding, as Go's `encoding/json` writes `[]byte`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn bytes_print_as_padded_base64() {
        for (input, want) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg==")] {
            assert_eq!(base64(input.as_bytes()), want);
        }
    }
}
