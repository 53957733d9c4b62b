//! Kubernetes' CEL semver library (`k8s.io/apiserver/pkg/cel/library/semverlib.go`, in the
//! server's environment from 1.33, with the normalizing overloads):
//!
//! * `semver(s)`, `isSemver(s)`: strict Semantic Versioning 2.0 as `github.com/blang/semver/v4`
//!   reads it (`MAJOR.MINOR.PATCH`, no leading zeros, optional `-prerelease` and `+build`);
//! * `semver(s, true)`, `isSemver(s, true)`: first normalized as upstream does it (a leading
//!   `v` dropped, leading zeros dropped from the first three parts, missing minor and patch
//!   added as `0`: `v1.02` is `1.2.0`);
//! * on a version `major()`, `minor()`, `patch()`, `isGreaterThan(v)`, `isLessThan(v)`,
//!   `compareTo(v)`; `==` compares precedence, so build metadata is ignored.

use std::cmp::Ordering;

use super::{error, CelResult};
use cel::common::types::{CelBool, CelInt, CelString, Kind, Type, BOOL_TYPE, STRING_TYPE};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

use super::go_quote;

/// The CEL type, named as upstream names it.
pub(super) static SEMVER_TYPE: Type = Type::simple_type(Kind::Opaque, "kubernetes.Semver");

/// A prerelease identifier: numeric ones order by value and before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Text(String),
}

impl Pre {
    fn cmp(&self, o: &Pre) -> Ordering {
        match (self, o) {
            (Pre::Num(a), Pre::Num(b)) => a.cmp(b),
            (Pre::Num(_), Pre::Text(_)) => Ordering::Less,
            (Pre::Text(_), Pre::Num(_)) => Ordering::Greater,
            (Pre::Text(a), Pre::Text(b)) => a.cmp(b),
        }
    }
}

/// A semantic version, as blang/semver keeps it.
#[derive(Debug, Clone)]
pub(super) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
    build: Vec<String>,
}

const ALPHANUM: fn(char) -> bool = |c| c.is_ascii_alphanumeric() || c == '-';

fn only_digits(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_digit())
}

/// Go's `strconv.ParseUint(s, 10, 64)` with its errors.
fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() || !only_digits(s) {
        return Err(format!("strconv.ParseUint: parsing {}: invalid syntax", go_quote(s)));
    }
    s.parse().map_err(|_| format!("strconv.ParseUint: parsing {}: value out of range", go_quote(s)))
}

/// A numeric part: digits only, no leading zero.
fn number(s: &str, what: &str) -> Result<u64, String> {
    if !only_digits(s) {
        return Err(format!("Invalid character(s) found in {} number {}", what.to_lowercase(), go_quote(s)));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!("{what} number must not contain leading zeroes {}", go_quote(s)));
    }
    parse_uint(s)
}

impl Version {
    /// blang/semver's `Parse`, with its error words.
    pub(super) fn parse(s: &str) -> Result<Version, String> {
        if s.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".into());
        }
        let major = number(parts[0], "Major")?;
        let minor = number(parts[1], "Minor")?;
        let mut patch = parts[2];
        let mut build = Vec::new();
        if let Some((p, b)) = patch.split_once('+') {
            build = b.split('.').map(str::to_owned).collect();
            patch = p;
        }
        let mut pre = Vec::new();
        if let Some((p, rest)) = patch.split_once('-') {
            pre = rest.split('.').collect();
            patch = p;
        }
        let patch = number(patch, "Patch")?;
        let pre = pre
            .into_iter()
            .map(|p| {
                if p.is_empty() {
                    Err("Prerelease is empty".to_owned())
                } else if only_digits(p) {
                    if p.len() > 1 && p.starts_with('0') {
                        return Err(format!("Numeric PreRelease version must not contain leading zeroes {}", go_quote(p)));
                    }
                    parse_uint(p).map(Pre::Num)
                } else if p.chars().all(ALPHANUM) {
                    Ok(Pre::Text(p.to_owned()))
                } else {
                    Err(format!("Invalid character(s) found in prerelease {}", go_quote(p)))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        for b in &build {
            if b.is_empty() {
                return Err("Build meta data is empty".into());
            }
            if !b.chars().all(ALPHANUM) {
                return Err(format!("Invalid character(s) found in build meta data {}", go_quote(b)));
            }
        }
        Ok(Version { major, minor, patch, pre, build })
    }

    /// Upstream's normalizing parse: `v` dropped, leading zeros dropped, minor and patch added.
    pub(super) fn parse_normalized(s: &str) -> Result<Version, String> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s
            .splitn(3, '.')
            .map(|p| {
                if p.len() <= 1 {
                    return p.to_owned();
                }
                let trimmed = p.trim_start_matches('0');
                if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    trimmed.to_owned()
                } else {
                    format!("0{trimmed}")
                }
            })
            .collect();
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0".to_owned());
        }
        Version::parse(&parts.join("."))
    }

    /// Precedence (build metadata ignored).
    fn cmp(&self, o: &Version) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let c = a.cmp(b);
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                Pre::Num(n) => write!(f, "{n}")?,
                Pre::Text(t) => f.write_str(t)?,
            }
        }
        for (i, b) in self.build.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            f.write_str(b)?;
        }
        Ok(())
    }
}

/// A version as a CEL value.
#[derive(Debug, Clone)]
pub(super) struct SemverVal(pub(super) Version);

super::opaque_val!(SemverVal, SEMVER_TYPE, |a, b| a.0.cmp(&b.0) == Ordering::Equal);

fn version_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a Version, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<SemverVal>()).map(|v| &v.0).ok_or_else(|| error(function, "expected a semver"))
}

/// The string argument, read strictly or normalized as the optional bool argument says.
fn read(function: &str, args: &[CowVal<'_, '_>]) -> Result<Result<Version, String>, ExecutionError> {
    let s = args.first().and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| error(function, "expected a string"))?;
    let normalize = match args.get(1) {
        None => false,
        Some(b) => *b.downcast_ref::<CelBool>().ok_or_else(|| error(function, "expected a bool"))?.inner(),
    };
    Ok(if normalize { Version::parse_normalized(s) } else { Version::parse(s) })
}

fn semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let v = read("semver", &args)?.map_err(|e| error("semver", e))?;
    Ok(CowVal::owned(SemverVal(v)))
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(read("isSemver", &args)?.is_ok())))
}

fn int<'b, 'v>(n: u64) -> CelResult<'b, 'v> {
    // Go converts the uint64 to int64 as is.
    Ok(CowVal::owned(CelInt::from(n as i64)))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    int(version_arg("major", &args, 0)?.major)
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    int(version_arg("minor", &args, 0)?.minor)
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    int(version_arg("patch", &args, 0)?.patch)
}

fn compare(function: &str, args: &[CowVal<'_, '_>]) -> Result<Ordering, ExecutionError> {
    Ok(version_arg(function, args, 0)?.cmp(version_arg(function, args, 1)?))
}

fn is_greater_than<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(compare("isGreaterThan", &args)? == Ordering::Greater)))
}

fn is_less_than<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(compare("isLessThan", &args)? == Ordering::Less)))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelInt::from(compare("compareTo", &args)? as i64)))
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    let v = || SEMVER_TYPE.to_owned();
    env.add_type(v())?;
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], semver)?;
    env.add_overload("semver", "string_bool_to_semver", vec![STRING_TYPE, BOOL_TYPE], semver)?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload("isSemver", "is_semver_string_bool", vec![STRING_TYPE, BOOL_TYPE], is_semver)?;
    env.add_member_overload("major", "semver_major", v(), vec![], major)?;
    env.add_member_overload("minor", "semver_minor", v(), vec![], minor)?;
    env.add_member_overload("patch", "semver_patch", v(), vec![], patch)?;
    env.add_member_overload("isGreaterThan", "semver_is_greater_than", v(), vec![v()], is_greater_than)?;
    env.add_member_overload("isLessThan", "semver_is_less_than", v(), vec![v()], is_less_than)?;
    env.add_member_overload("compareTo", "semver_compare_to", v(), vec![v()], compare_to)?;
    Ok(())
}
