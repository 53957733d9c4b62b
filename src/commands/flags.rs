//! Parsers of the flags several subcommands take alike; no subcommand.

/// A duration flag's parser (`flag`, for `what` to take): a duration as `--request-timeout`
/// takes one, above zero.
pub(crate) fn above_zero(flag: &'static str, what: &'static str) -> impl Fn(&str) -> Result<std::time::Duration, String> + Clone {
    move |s| match crate::live::parse_duration(s) {
        Ok(Some(d)) if !d.is_zero() => Ok(d),
        Ok(_) => Err(format!("{what} needs a time above zero")),
        Err(e) => Err(e.replace("--request-timeout", flag)),
    }
}
