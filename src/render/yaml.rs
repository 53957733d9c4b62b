//! YAML output, one way for every command: serde-saphyr (the maintained YAML library the
//! engine already reads with), in block style as kubectl writes YAML. Strings stay plain
//! scalars where YAML allows, and are quoted with double quotes where it does not (`"5"`,
//! `"true"`), as `kubectl get -o yaml` quotes them; none is folded into a `>` block.

use serde::Serialize;

/// `v` as one YAML document.
pub fn to_string<T: Serialize>(v: &T) -> Result<String, String> {
    let options = serde_saphyr::ser_options! { prefer_block_scalars: false };
    serde_saphyr::to_string_with_options(v, options).map_err(|e| e.to_string())
}

/// `v` as one YAML document, written to `w`.
pub fn to_writer<W: std::io::Write + ?Sized, T: Serialize>(w: &mut W, v: &T) -> std::io::Result<()> {
    w.write_all(to_string(v).map_err(std::io::Error::other)?.as_bytes())
}
