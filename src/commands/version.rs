//! `kubectl quota version`.

use crate::error::Fatal;

/// Prints the plugin's version.
pub fn run() -> Result<i32, Fatal> {
    println!("kubectl-quota {}", env!("CARGO_PKG_VERSION"));
    Ok(0)
}
