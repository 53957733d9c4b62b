//! Kubernetes' CEL url library (`k8s.io/apiserver/pkg/cel/library/urls.go`, in the server's
//! environment in every release): `url(s)`, `isURL(s)`, and on a URL `getScheme()`,
//! `getHost()`, `getHostname()`, `getPort()`, `getEscapedPath()`, `getQuery()`; two URLs are `==`
//! when they print alike.
//!
//! A string is a URL when Go's `net/url.ParseRequestURI` takes it (an absolute URL, or an
//! absolute path; no fragment is cut off first), and the URL is what `net/url.Parse` makes of it.
//! Both are followed here step by step, as Go 1.26 has them (the release 1.37 is built with,
//! strict about colons in an http host), with their error words.

use std::collections::HashMap;

use super::CelResult;
use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, Kind, Type, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::go_quote;

/// The CEL type, named as upstream names it.
pub(super) static URL_TYPE: Type = Type::simple_type(Kind::Opaque, "kubernetes.URL");

/// Which part of a URL a byte is escaped or unescaped for (Go's `encoding` modes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Whether `c` must be percent-escaped in the part `mode` (RFC 3986 as Go applies it).
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(c, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b':' | b'[' | b']' | b'<' | b'>' | b'"')
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

/// Go's `unescape`: `%XX` decoded (and `+` as a space in a query component), with its checks
/// and errors.
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let escape_error = |bad: &[u8]| format!("invalid URL escape {}", go_quote(&String::from_utf8_lossy(bad)));
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                if i + 2 >= s.len() || !is_hex(s[i + 1]) || !is_hex(s[i + 2]) {
                    return Err(escape_error(&s[i..s.len().min(i + 3)]));
                }
                let v = unhex(s[i + 1]) << 4 | unhex(s[i + 2]);
                if mode == Mode::Host && unhex(s[i + 1]) < 8 && &s[i..i + 3] != b"%25" {
                    return Err(escape_error(&s[i..i + 3]));
                }
                if mode == Mode::Zone && &s[i..i + 3] != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                    return Err(escape_error(&s[i..i + 3]));
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!("invalid character {} in host name", go_quote(&String::from_utf8_lossy(&s[i..=i]))));
                }
                i += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                out.push(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `escape` (the modes used here never write `+` for a space).
fn escape(s: &[u8], mode: Mode) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            out.extend_from_slice(format!("%{c:02X}").as_bytes());
        } else {
            out.push(c);
        }
    }
    out
}

fn valid_encoded(s: &[u8], mode: Mode) -> bool {
    s.iter().all(|&c| {
        matches!(c, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b':' | b'@' | b'[' | b']' | b'%') || !should_escape(c, mode)
    })
}

fn valid_optional_port(port: &[u8]) -> bool {
    port.is_empty() || port[0] == b':' && port[1..].iter().all(u8::is_ascii_digit)
}

fn valid_userinfo(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '~' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=' | '%' | '@')
    })
}

/// A parsed URL: Go's `url.URL`, its parts unescaped where Go unescapes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Url {
    scheme: String,
    opaque: String,
    /// Username, and password if one is set.
    user: Option<(Vec<u8>, Option<Vec<u8>>)>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_path: String,
    force_query: bool,
    raw_query: String,
    fragment: Vec<u8>,
    raw_fragment: String,
    omit_host: bool,
}

/// Go's `getScheme`: the scheme and the rest, if the text begins with one.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn parse_host(scheme: &str, host: &str) -> Result<Vec<u8>, String> {
    let bytes = host.as_bytes();
    if let Some(open) = host.rfind('[') {
        if open > 0 {
            return Err("invalid IP-literal".into());
        }
        let close = host.rfind(']').ok_or("missing ']' in host")?;
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
        let colon_port = unescape(colon_port.as_bytes(), Mode::Host)?;
        let name = &host[1..close];
        let unescaped = match name.find("%25") {
            Some(z) => [unescape(&name.as_bytes()[..z], Mode::Host)?, unescape(&name.as_bytes()[z..], Mode::Zone)?].concat(),
            None => unescape(name.as_bytes(), Mode::Host)?,
        };
        let text = String::from_utf8_lossy(&unescaped).into_owned();
        let v4 = super::net::parse_go_addr(&text).map_err(|e| format!("invalid host: {e}"))?;
        if v4 {
            return Err("invalid IP-literal".into());
        }
        return Ok([b"[".as_slice(), &unescaped, b"]", &colon_port].concat());
    }
    if let Some(first) = host.find(':') {
        let last = host.rfind(':').unwrap_or(first);
        // Go 1.26 takes the first colon of an http(s) host (urlstrictcolons), the last of others.
        let i = if last != first && scheme != "http" && scheme != "https" { last } else { first };
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(bytes, Mode::Host)
}

impl Url {
    /// Go's `parse`, for a request URI (`ParseRequestURI`) or any URL reference (`Parse`, the
    /// fragment cut off before).
    fn parse_go(raw: &str, via_request: bool) -> Result<Url, String> {
        if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
            return Err("net/url: invalid control character in URL".into());
        }
        if raw.is_empty() && via_request {
            return Err("empty url".into());
        }
        let mut url = Url::default();
        if raw == "*" {
            url.path = b"*".to_vec();
            return Ok(url);
        }
        let (scheme, mut rest) = split_scheme(raw)?;
        url.scheme = scheme.to_ascii_lowercase();
        if rest.ends_with('?') && rest.matches('?').count() == 1 {
            url.force_query = true;
            rest = &rest[..rest.len() - 1];
        } else if let Some((before, query)) = rest.split_once('?') {
            url.raw_query = query.to_owned();
            rest = before;
        }
        if !rest.starts_with('/') {
            if !url.scheme.is_empty() {
                url.opaque = rest.to_owned();
                return Ok(url);
            }
            if via_request {
                return Err("invalid URI for request".into());
            }
            if rest.split('/').next().is_some_and(|segment| segment.contains(':')) {
                return Err("first path segment in URL cannot contain colon".into());
            }
        }
        if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//") {
            let (authority, path) = match rest[2..].find('/') {
                Some(i) => (&rest[2..2 + i], &rest[2 + i..]),
                None => (&rest[2..], ""),
            };
            let (host_part, userinfo) = match authority.rfind('@') {
                Some(i) => (&authority[i + 1..], Some(&authority[..i])),
                None => (authority, None),
            };
            url.host = parse_host(&url.scheme, host_part)?;
            if let Some(userinfo) = userinfo {
                if !valid_userinfo(userinfo) {
                    return Err("net/url: invalid userinfo".into());
                }
                url.user = Some(match userinfo.split_once(':') {
                    None => (unescape(userinfo.as_bytes(), Mode::UserPassword)?, None),
                    Some((name, password)) => (unescape(name.as_bytes(), Mode::UserPassword)?, Some(unescape(password.as_bytes(), Mode::UserPassword)?)),
                });
            }
            rest = path;
        } else if !url.scheme.is_empty() && rest.starts_with('/') {
            url.omit_host = true;
        }
        url.path = unescape(rest.as_bytes(), Mode::Path)?;
        if escape(&url.path, Mode::Path) != rest.as_bytes() {
            url.raw_path = rest.to_owned();
        }
        Ok(url)
    }

    /// What upstream's `url(s)` makes of `s`: `ParseRequestURI` must take it, then `Parse` reads
    /// it; either's error in upstream's words.
    pub(super) fn parse(s: &str) -> Result<Url, String> {
        let failed = |url: &str, e: String| format!("URL parse error during conversion from string: parse {}: {e}", go_quote(url));
        Url::parse_go(s, true).map_err(|e| failed(s, e))?;
        let (before, fragment) = s.split_once('#').unwrap_or((s, ""));
        let mut url = Url::parse_go(before, false).map_err(|e| failed(before, e))?;
        if !fragment.is_empty() {
            url.fragment = unescape(fragment.as_bytes(), Mode::Fragment).map_err(|e| failed(s, e))?;
            if escape(&url.fragment, Mode::Fragment) != fragment.as_bytes() {
                url.raw_fragment = fragment.to_owned();
            }
        }
        Ok(url)
    }

    fn is_url(s: &str) -> bool {
        Url::parse_go(s, true).is_ok()
    }

    /// Why `url.ParseRequestURI` refuses `s`, in its words, if it does.
    pub(super) fn request_uri_error(s: &str) -> Option<String> {
        Url::parse_go(s, true).err().map(|e| format!("parse {}: {e}", go_quote(s)))
    }

    fn escaped_path(&self) -> Vec<u8> {
        if !self.raw_path.is_empty()
            && valid_encoded(self.raw_path.as_bytes(), Mode::Path)
            && unescape(self.raw_path.as_bytes(), Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.as_bytes().to_vec();
        }
        if self.path == b"*" {
            return b"*".to_vec();
        }
        escape(&self.path, Mode::Path)
    }

    fn escaped_fragment(&self) -> Vec<u8> {
        if !self.raw_fragment.is_empty()
            && valid_encoded(self.raw_fragment.as_bytes(), Mode::Fragment)
            && unescape(self.raw_fragment.as_bytes(), Mode::Fragment).is_ok_and(|f| f == self.fragment)
        {
            return self.raw_fragment.as_bytes().to_vec();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    /// Go's `splitHostPort` of the host: the name (without an IPv6 literal's brackets) and port.
    fn host_port(&self) -> (&[u8], &[u8]) {
        let mut host = self.host.as_slice();
        let mut port: &[u8] = b"";
        if let Some(colon) = host.iter().rposition(|&c| c == b':') {
            if valid_optional_port(&host[colon..]) {
                (host, port) = (&host[..colon], &host[colon + 1..]);
            }
        }
        if host.len() >= 2 && host[0] == b'[' && host[host.len() - 1] == b']' {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }

    /// Go's `Query()`: the query's parameters, those that do not parse left out.
    fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        if self.raw_query.matches('&').count() + 1 > 10_000 {
            return out;
        }
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (unescape(key.as_bytes(), Mode::QueryComponent), unescape(value.as_bytes(), Mode::QueryComponent)) else { continue };
            let (key, value) = (String::from_utf8_lossy(&key).into_owned(), String::from_utf8_lossy(&value).into_owned());
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out
    }
}

impl std::fmt::Display for Url {
    /// Go's `URL.String()`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf: Vec<u8> = Vec::new();
        if !self.scheme.is_empty() {
            buf.extend_from_slice(self.scheme.as_bytes());
            buf.push(b':');
        }
        if !self.opaque.is_empty() {
            buf.extend_from_slice(self.opaque.as_bytes());
        } else {
            // No authority is written when there is neither host nor user, and either no scheme
            // or a scheme whose path was written without `//`.
            let no_authority = self.host.is_empty() && self.user.is_none();
            if !(no_authority && (self.scheme.is_empty() || self.omit_host)) {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    buf.extend_from_slice(b"//");
                }
                if let Some((name, password)) = &self.user {
                    buf.extend(escape(name, Mode::UserPassword));
                    if let Some(password) = password {
                        buf.push(b':');
                        buf.extend(escape(password, Mode::UserPassword));
                    }
                    buf.push(b'@');
                }
                buf.extend(escape(&self.host, Mode::Host));
            }
            let path = self.escaped_path();
            if !path.is_empty() && path[0] != b'/' && !self.host.is_empty() {
                buf.push(b'/');
            }
            if buf.is_empty() && path.split(|&c| c == b'/').next().is_some_and(|segment| segment.contains(&b':')) {
                buf.extend_from_slice(b"./");
            }
            buf.extend(path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push(b'?');
            buf.extend_from_slice(self.raw_query.as_bytes());
        }
        if !self.fragment.is_empty() {
            buf.push(b'#');
            buf.extend(self.escaped_fragment());
        }
        f.write_str(&String::from_utf8_lossy(&buf))
    }
}

/// A URL as a CEL value.
#[derive(Debug, Clone)]
pub(super) struct UrlVal(pub(super) Url);

super::opaque_val!(UrlVal, URL_TYPE, |a, b| a.0.to_string() == b.0.to_string());

fn string_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>]) -> Result<&'a str, ExecutionError> {
    args.first().and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| ExecutionError::function_error(function, "expected a string"))
}

fn url_arg<'a>(function: &str, args: &'a [CowVal<'_, '_>]) -> Result<&'a Url, ExecutionError> {
    args.first().and_then(|a| a.downcast_ref::<UrlVal>()).map(|u| &u.0).ok_or_else(|| ExecutionError::function_error(function, "expected a URL"))
}

fn text<'b, 'v>(s: impl AsRef<[u8]>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelString::from(String::from_utf8_lossy(s.as_ref()).into_owned())))
}

fn url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let u = Url::parse(string_arg("url", &args)?).map_err(|e| ExecutionError::function_error("url", e))?;
    Ok(CowVal::owned(UrlVal(u)))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(Url::is_url(string_arg("isURL", &args)?))))
}

fn get_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    text(&url_arg("getScheme", &args)?.scheme)
}

fn get_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    text(&url_arg("getHost", &args)?.host)
}

fn get_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    text(url_arg("getHostname", &args)?.host_port().0)
}

fn get_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    text(url_arg("getPort", &args)?.host_port().1)
}

fn get_escaped_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    text(url_arg("getEscapedPath", &args)?.escaped_path())
}

fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let mut map: HashMap<CelMapKey<'static>, Box<dyn Val>> = HashMap::new();
    for (key, values) in url_arg("getQuery", &args)?.query() {
        let values: Vec<Box<dyn Val>> = values.into_iter().map(|v| Box::new(CelString::from(v)) as Box<dyn Val>).collect();
        map.insert(CelMapKey::from(key), Box::new(CelList::from(values)));
    }
    Ok(CowVal::owned(CelMap::from(map)))
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    let u = || URL_TYPE.to_owned();
    env.add_type(u())?;
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    env.add_member_overload("getScheme", "url_get_scheme", u(), vec![], get_scheme)?;
    env.add_member_overload("getHost", "url_get_host", u(), vec![], get_host)?;
    env.add_member_overload("getHostname", "url_get_hostname", u(), vec![], get_hostname)?;
    env.add_member_overload("getPort", "url_get_port", u(), vec![], get_port)?;
    env.add_member_overload("getEscapedPath", "url_get_escaped_path", u(), vec![], get_escaped_path)?;
    env.add_member_overload("getQuery", "url_get_query", u(), vec![], get_query)?;
    Ok(())
}
