//! Control characters in user-controlled text, made visible before they reach a terminal.
//!
//! kubectl escapes terminal output through cli-runtime's `printers.EscapeTerminal`, which
//! shows ESC as `^[` and a carriage return as `\r` so that names cannot move the cursor,
//! recolour or retitle the terminal. We follow it for those two and go further for the rest,
//! because a name with a newline would otherwise forge a line of our report (a verdict line
//! saying "admitted"): `\n` and `\t` are shown as such, every other C0 control, DEL and the
//! C1 controls (U+0080 to U+009F, where a lone CSI lives) as `\u{..}`-style `\u009b`.
//! Unicode's bidirectional controls (embeddings, overrides, isolates and the direction marks)
//! are shown the same way: they reorder what a terminal draws, so a name could make a line
//! read other than it is (the "Trojan source" trick). So are U+2028 and U+2029, the line and
//! paragraph separators, line breaks to many readers.
//! Text only: JSON and YAML encoders escape on their own.

use std::borrow::Cow;

fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || is_line_separator(c)
}

/// Unicode's LINE SEPARATOR and PARAGRAPH SEPARATOR: line breaks to JavaScript, editors and
/// many terminals' viewers, escaped as the other line breaks are.
fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Whether `s` holds nothing [`escape`] would change.
pub fn is_plain(s: &str) -> bool {
    matches!(escape(s), Cow::Borrowed(_))
}

/// ALM, LRM and RLM, the embeddings and overrides (U+202A to U+202E) and the isolates
/// (U+2066 to U+2069).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `s` is printable ASCII only: nothing to escape, and one column per byte.
pub fn printable_ascii(s: &str) -> bool {
    s.bytes().all(|b| (b' '..=b'~').contains(&b))
}

/// `s` with every control character replaced by a visible form (see the module comment).
pub fn escape(s: &str) -> Cow<'_, str> {
    // Printable ASCII, byte by byte (nearly every name): nothing to look at char by char.
    if printable_ascii(s) || !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\x1b' => out.push_str("^["),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Escapes each line of a multi-line message on its own, keeping the line breaks that our
/// own code put there (error lists) but nothing a line could smuggle in.
pub fn escape_lines(s: &str) -> String {
    s.split('\n').map(|l| escape(l).into_owned()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        let cases = [
            ("web", "web"),
            ("a\x1b[31mred", "a^[[31mred"),
            ("title\x1b]0;owned\x07", "title^[]0;owned\\u0007"),
            ("x\ny: admitted", "x\\ny: admitted"),
            ("cr\rover", "cr\\rover"),
            ("tab\there", "tab\\there"),
            ("csi\u{9b}31m", "csi\\u009b31m"),
            ("del\x7f", "del\\u007f"),
            ("ünïcode ✓", "ünïcode ✓"),
            ("admin\u{202e}nimda", "admin\\u202enimda"),
            ("a\u{2066}b\u{2069}", "a\\u2066b\\u2069"),
            ("rlm\u{200f}", "rlm\\u200f"),
            ("עברית", "עברית"),
            ("line\u{2028}sep\u{2029}", "line\\u2028sep\\u2029"),
        ];
        for (input, want) in cases {
            assert_eq!(escape(input), want, "{input:?}");
        }
        assert_eq!(escape_lines("one\x1b\ntwo\r"), "one^[\ntwo\\r");
    }
}
