//! `kubectl quota version`.

use crate::error::Fatal;

/// Prints the plugin's version.
pub fn run() -> Result<i32, Fatal> {
    crate::error::print_out(&format!("kubectl-quota {}\n", env!("CARGO_PKG_VERSION")))?;
    Ok(0)
}
