//! Kubernetes' CEL ip and cidr libraries (`k8s.io/apiserver/pkg/cel/library/ip.go`, `cidr.go`,
//! in the server's environment from 1.30):
//!
//! * `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `string(ip)`, and on an IP `family()`,
//!   `isUnspecified()`, `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()`,
//!   `isGlobalUnicast()`;
//! * `cidr(s)`, `isCIDR(s)`, `string(cidr)`, and on a CIDR `containsIP(ip or string)`,
//!   `containsCIDR(cidr or string)`, `ip()`, `masked()`, `prefixLength()`, and from 1.38
//!   `isMask()`;
//! * `==` between two IPs (same address) or two CIDRs (same address and prefix length, not
//!   masked: `cidr('10.0.0.1/8') != cidr('10.0.0.0/8')`).
//!
//! Addresses are read as Go's `net/netip` reads them (no leading zeros in an IPv4 octet, at most
//! four hex digits a group, one `::`, an IPv4 tail only in the last 32 bits), with upstream's two
//! refusals on top: a zone (`fe80::1%eth0`) and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`).
//! Parse errors carry netip's and upstream's words; addresses print as netip prints them
//! (RFC 5952: lower case, the longest run of two or more zero groups as `::`).

use super::{error, CelResult};
use cel::common::types::{CelBool, CelInt, CelString, Kind, Type, STRING_TYPE};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::go_quote;

/// The CEL types, named as upstream names them.
pub(super) static IP_TYPE: Type = Type::simple_type(Kind::Opaque, "net.IP");
pub(super) static CIDR_TYPE: Type = Type::simple_type(Kind::Opaque, "net.CIDR");

/// An IPv4 or IPv6 address (never with a zone, never IPv4-mapped: upstream refuses both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Addr {
    V4([u8; 4]),
    V6([u8; 16]),
}

impl Addr {
    fn bits(self) -> u32 {
        match self {
            Addr::V4(_) => 32,
            Addr::V6(_) => 128,
        }
    }

    /// The address as a number, left-aligned in 128 bits for IPv4 too, so prefixes compare alike.
    fn as_u128(self) -> u128 {
        match self {
            Addr::V4(b) => u128::from(u32::from_be_bytes(b)) << 96,
            Addr::V6(b) => u128::from_be_bytes(b),
        }
    }

    /// The address of this family whose number (left-aligned as [`Addr::as_u128`] gives it) is `n`.
    fn with_u128(self, n: u128) -> Addr {
        match self {
            Addr::V4(_) => Addr::V4(((n >> 96) as u32).to_be_bytes()),
            Addr::V6(_) => Addr::V6(n.to_be_bytes()),
        }
    }

    /// The first `bits` bits kept, the rest zero.
    fn masked(self, bits: u32) -> Addr {
        let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
        self.with_u128(self.as_u128() & mask)
    }

    fn group(b: &[u8; 16], i: usize) -> u16 {
        u16::from_be_bytes([b[2 * i], b[2 * i + 1]])
    }

    fn is_unspecified(self) -> bool {
        self.as_u128() == 0
    }

    fn is_loopback(self) -> bool {
        match self {
            Addr::V4(b) => b[0] == 127,
            Addr::V6(b) => u128::from_be_bytes(b) == 1,
        }
    }

    fn is_multicast(self) -> bool {
        match self {
            Addr::V4(b) => b[0] & 0xf0 == 0xe0,
            Addr::V6(b) => b[0] == 0xff,
        }
    }

    fn is_link_local_multicast(self) -> bool {
        match self {
            Addr::V4(b) => b[..3] == [224, 0, 0],
            Addr::V6(b) => Addr::group(&b, 0) & 0xff0f == 0xff02,
        }
    }

    fn is_link_local_unicast(self) -> bool {
        match self {
            Addr::V4(b) => b[..2] == [169, 254],
            Addr::V6(b) => Addr::group(&b, 0) & 0xffc0 == 0xfe80,
        }
    }

    fn is_global_unicast(self) -> bool {
        if self == Addr::V4([255; 4]) || self.is_unspecified() {
            return false;
        }
        !self.is_loopback() && !self.is_multicast() && !self.is_link_local_unicast()
    }
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::V4([a, b, c, d]) => write!(f, "{a}.{b}.{c}.{d}"),
            Addr::V6(bytes) => {
                // The longest run of two or more zero groups (the first of equal runs) is `::`.
                let groups: Vec<u16> = (0..8).map(|i| Addr::group(bytes, i)).collect();
                let (mut start, mut len) = (8, 0);
                let mut i = 0;
                while i < 8 {
                    let run = groups[i..].iter().take_while(|g| **g == 0).count();
                    if run >= 2 && run > len {
                        (start, len) = (i, run);
                    }
                    i += run.max(1);
                }
                let mut i = 0;
                while i < 8 {
                    if i == start {
                        f.write_str("::")?;
                        i += len;
                        continue;
                    }
                    if i > 0 && i != start + len {
                        f.write_str(":")?;
                    }
                    write!(f, "{:x}", groups[i])?;
                    i += 1;
                }
                Ok(())
            }
        }
    }
}

/// netip's error for `input`: `ParseAddr("in"): what` and, where it says, the rest of the input
/// it stopped at.
fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!("ParseAddr({}): {msg} (at {})", go_quote(input), go_quote(at)),
        _ => format!("ParseAddr({}): {msg}", go_quote(input)),
    }
}

/// Reads the dotted IPv4 address `text` (all or the end of `input`, which errors name) into
/// four bytes, as netip does.
fn parse_v4_fields(input: &str, text: &str) -> Result<[u8; 4], String> {
    let s = text.as_bytes();
    let (mut fields, mut pos, mut val, mut digits) = ([0u8; 4], 0, 0u32, 0);
    for (i, &c) in s.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return Err(addr_error(input, "IPv4 field has octet with leading zero", None));
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if val > 255 {
                    return Err(addr_error(input, "IPv4 field has value >255", None));
                }
            }
            b'.' => {
                if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                    return Err(addr_error(input, "IPv4 field must have at least one digit", Some(&text[i..])));
                }
                if pos == 3 {
                    return Err(addr_error(input, "IPv4 address too long", None));
                }
                fields[pos] = val as u8;
                pos += 1;
                (val, digits) = (0, 0);
            }
            _ => return Err(addr_error(input, "unexpected character", Some(text.get(i..).unwrap_or("")))),
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// The hex field at the start of `s` (of the address `input`): its value and its length.
fn hex_group(input: &str, s: &str) -> Result<(u32, usize), String> {
    let bytes = s.as_bytes();
    let mut off = 0;
    let mut acc: u32 = 0;
    while off < bytes.len() {
        let digit = match bytes[off] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        acc = (acc << 4) + u32::from(digit);
        if off > 3 {
            return Err(addr_error(input, "each group must have 4 or less digits", Some(s)));
        }
        off += 1;
    }
    if off == 0 {
        return Err(addr_error(input, "each colon-separated field must have at least one digit", Some(s)));
    }
    Ok((acc, off))
}

/// Reads an IPv6 address as netip does; a zone is returned beside it (upstream refuses it).
fn parse_v6(input: &str) -> Result<(Addr, bool), String> {
    let (mut s, zoned) = match input.find('%') {
        Some(i) if i + 1 == input.len() => return Err(addr_error(input, "zone must be a non-empty string", None)),
        Some(i) => (&input[..i], true),
        None => (input, false),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok((Addr::V6(ip), zoned));
        }
    }
    let mut i = 0;
    while i < 16 {
        let (acc, off) = hex_group(input, s)?;
        if s.as_bytes().get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(input, "embedded IPv4 address must replace the final 2 fields of the address", Some(s)));
            }
            if i + 4 > 16 {
                return Err(addr_error(input, "too many hex fields to fit an embedded IPv4 at the end of the address", Some(s)));
            }
            let fields = parse_v4_fields(input, s)?;
            ip[i..i + 4].copy_from_slice(&fields);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(input, "unexpected character, want colon", Some(s)));
        }
        if s.len() == 1 {
            return Err(addr_error(input, "colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(e..i, e + n);
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(input, "the :: must expand to at least one field of zeros", None));
    }
    Ok((Addr::V6(ip), zoned))
}

/// netip's ParseAddr: the address and whether it had a zone.
fn parse_addr(s: &str) -> Result<(Addr, bool), String> {
    for c in s.bytes() {
        match c {
            b'.' => return parse_v4_fields(s, s).map(|b| (Addr::V4(b), false)),
            b':' => return parse_v6(s),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

/// netip's ParseAddr alone (zones allowed), for the url library's IPv6 literals: whether the
/// address is IPv4, or netip's error.
pub(super) fn parse_go_addr(s: &str) -> Result<bool, String> {
    parse_addr(s).map(|(a, _)| matches!(a, Addr::V4(_)))
}

fn is_4in6(a: Addr) -> bool {
    matches!(a, Addr::V6(b) if b[..10] == [0; 10] && b[10..12] == [0xff, 0xff])
}

/// An address as upstream's `ip()` reads it.
pub(super) fn parse_ip(s: &str) -> Result<Addr, String> {
    let (addr, zoned) = parse_addr(s).map_err(|e| format!("IP Address {} parse error during conversion from string: {e}", go_quote(s)))?;
    if zoned {
        return Err(format!("IP address {} with zone value is not allowed", go_quote(s)));
    }
    if is_4in6(addr) {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(s)));
    }
    Ok(addr)
}

/// An address and a prefix length (not masked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Prefix {
    addr: Addr,
    bits: u32,
}

impl Prefix {
    fn contains(self, ip: Addr) -> bool {
        ip.bits() == self.addr.bits() && ip.masked(self.bits) == self.addr.masked(self.bits)
    }

    /// Whether `other` is inside this prefix: the same family, no shorter, and overlapping.
    fn contains_prefix(self, other: Prefix) -> bool {
        self.addr.bits() == other.addr.bits() && self.bits <= other.bits && other.addr.masked(self.bits) == self.addr.masked(self.bits)
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

/// netip's ParsePrefix, then upstream's refusal of an IPv4-mapped address; netip's errors in
/// upstream's words.
fn parse_prefix(s: &str) -> Result<Prefix, String> {
    let error = |msg: &str| format!("network address parse error during conversion from string: netip.ParsePrefix({}): {msg}", go_quote(s));
    let Some(slash) = s.rfind('/') else { return Err(error("no '/'")) };
    let (addr, zoned) = parse_addr(&s[..slash]).map_err(|e| error(&e))?;
    if zoned {
        return Err(error("IPv6 zones cannot be present in a prefix"));
    }
    let digits = &s[slash + 1..];
    let bad = || error(&format!("bad bits after slash: {}", go_quote(digits)));
    if digits.len() > 1 && !digits.starts_with(|c: char| ('1'..='9').contains(&c)) {
        return Err(bad());
    }
    // strconv.Atoi; a sign or a leading zero is refused above.
    let bits: i64 = digits.parse().map_err(|_| bad())?;
    if bits < 0 || bits > i64::from(addr.bits()) {
        return Err(error("prefix length out of range"));
    }
    if is_4in6(addr) {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(s)));
    }
    Ok(Prefix { addr, bits: bits as u32 })
}

/// A prefix as upstream's `cidr()` reads it (a netip error says "parse error" twice, as
/// upstream's does).
pub(super) fn parse_cidr(s: &str) -> Result<Prefix, String> {
    parse_prefix(s).map_err(|e| format!("network address parse error during conversion from string: {e}"))
}

/// An IP as a CEL value.
#[derive(Debug, Clone)]
pub(super) struct IpVal(pub(super) Addr);

/// A CIDR as a CEL value.
#[derive(Debug, Clone)]
pub(super) struct CidrVal(pub(super) Prefix);

super::opaque_val!(IpVal, IP_TYPE, |a, b| a.0 == b.0);

super::opaque_val!(CidrVal, CIDR_TYPE, |a, b| a.0 == b.0);

fn arg<'a, T: StaticVal>(function: &str, args: &'a [CowVal<'_, '_>], i: usize, what: &str) -> Result<&'a T, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<T>()).ok_or_else(|| error(function, format!("expected {what}")))
}

fn string_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a str, ExecutionError> {
    args.get(i).and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| error(function, "expected a string"))
}

fn ip_arg(function: &str, args: &[CowVal<'_, '_>], i: usize) -> Result<Addr, ExecutionError> {
    arg::<IpVal>(function, args, i, "an IP").map(|v| v.0)
}

fn cidr_arg(function: &str, args: &[CowVal<'_, '_>], i: usize) -> Result<Prefix, ExecutionError> {
    arg::<CidrVal>(function, args, i, "a CIDR").map(|v| v.0)
}

fn owned<'b, 'v, T: Val + 'v>(v: T) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(v))
}

fn ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(IpVal(parse_ip(string_arg("ip", &args, 0)?).map_err(|e| error("ip", e))?))
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelBool::from(parse_ip(string_arg("isIP", &args, 0)?).is_ok()))
}

fn is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let s = string_arg("ip.isCanonical", &args, 0)?;
    let addr = parse_ip(s).map_err(|e| error("ip.isCanonical", e))?;
    owned(CelBool::from(addr.to_string() == s))
}

fn ip_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelString::from(ip_arg("string", &args, 0)?.to_string()))
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelInt::from(if ip_arg("family", &args, 0)?.bits() == 32 { 4 } else { 6 }))
}

/// An IP's predicate as a member function.
macro_rules! ip_predicates {
    ($($name:ident = $cel:literal: $method:ident;)*) => {
        $(
            fn $name<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
                owned(CelBool::from(ip_arg($cel, &args, 0)?.$method()))
            }
        )*
    };
}

ip_predicates! {
    is_unspecified = "isUnspecified": is_unspecified;
    is_loopback = "isLoopback": is_loopback;
    is_link_local_multicast = "isLinkLocalMulticast": is_link_local_multicast;
    is_link_local_unicast = "isLinkLocalUnicast": is_link_local_unicast;
    is_global_unicast = "isGlobalUnicast": is_global_unicast;
}

fn cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CidrVal(parse_cidr(string_arg("cidr", &args, 0)?).map_err(|e| error("cidr", e))?))
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelBool::from(parse_prefix(string_arg("isCIDR", &args, 0)?).is_ok()))
}

fn cidr_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelString::from(cidr_arg("string", &args, 0)?.to_string()))
}

fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let prefix = cidr_arg("containsIP", &args, 0)?;
    let ip = match args.get(1).and_then(|a| a.downcast_ref::<CelString>()) {
        // Upstream loses the parse error here: it reports the overload as missing.
        Some(s) => parse_ip(s.inner()).map_err(|_| error("containsIP", "no such overload"))?,
        None => ip_arg("containsIP", &args, 1)?,
    };
    owned(CelBool::from(prefix.contains(ip)))
}

fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let prefix = cidr_arg("containsCIDR", &args, 0)?;
    let other = match args.get(1).and_then(|a| a.downcast_ref::<CelString>()) {
        Some(s) => parse_cidr(s.inner()).map_err(|e| error("containsCIDR", e))?,
        None => cidr_arg("containsCIDR", &args, 1)?,
    };
    owned(CelBool::from(prefix.contains_prefix(other)))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(IpVal(cidr_arg("ip", &args, 0)?.addr))
}

fn masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let p = cidr_arg("masked", &args, 0)?;
    owned(CidrVal(Prefix { addr: p.addr.masked(p.bits), bits: p.bits }))
}

/// Whether the CIDR's address has no bits set past its prefix (`192.168.0.0/24`, not
/// `192.168.0.1/24`): added in 1.38.
fn is_mask<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let p = cidr_arg("isMask", &args, 0)?;
    owned(CelBool::from(p.addr.masked(p.bits) == p.addr))
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    owned(CelInt::from(i64::from(cidr_arg("prefixLength", &args, 0)?.bits)))
}

/// Registers the two libraries on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    let (ip_t, cidr_t) = (|| IP_TYPE.to_owned(), || CIDR_TYPE.to_owned());
    env.add_type(ip_t())?;
    env.add_type(cidr_t())?;
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload("ip.isCanonical", "ip_is_canonical", vec![STRING_TYPE], is_canonical)?;
    env.add_overload("string", "ip_to_string", vec![ip_t()], ip_string)?;
    env.add_member_overload("family", "ip_family", ip_t(), vec![], family)?;
    env.add_member_overload("isUnspecified", "ip_is_unspecified", ip_t(), vec![], is_unspecified)?;
    env.add_member_overload("isLoopback", "ip_is_loopback", ip_t(), vec![], is_loopback)?;
    env.add_member_overload("isLinkLocalMulticast", "ip_is_link_local_multicast", ip_t(), vec![], is_link_local_multicast)?;
    env.add_member_overload("isLinkLocalUnicast", "ip_is_link_local_unicast", ip_t(), vec![], is_link_local_unicast)?;
    env.add_member_overload("isGlobalUnicast", "ip_is_global_unicast", ip_t(), vec![], is_global_unicast)?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![cidr_t()], cidr_string)?;
    env.add_member_overload("containsIP", "cidr_contains_ip_string", cidr_t(), vec![STRING_TYPE], contains_ip)?;
    env.add_member_overload("containsIP", "cidr_contains_ip_ip", cidr_t(), vec![ip_t()], contains_ip)?;
    env.add_member_overload("containsCIDR", "cidr_contains_cidr_string", cidr_t(), vec![STRING_TYPE], contains_cidr)?;
    env.add_member_overload("containsCIDR", "cidr_contains_cidr", cidr_t(), vec![cidr_t()], contains_cidr)?;
    env.add_member_overload("ip", "cidr_ip", cidr_t(), vec![], cidr_ip)?;
    env.add_member_overload("masked", "cidr_masked", cidr_t(), vec![], masked)?;
    env.add_member_overload("prefixLength", "cidr_prefix_length", cidr_t(), vec![], prefix_length)?;
    env.add_member_overload("isMask", "cidr_is_mask", cidr_t(), vec![], is_mask)?;
    Ok(())
}
