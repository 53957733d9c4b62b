//! One file per subcommand, each shaped like kubectl's own: its flags (a clap `Args` struct
//! with its help text), the options the engine takes, and `run`.

pub mod blocked;
pub mod capacity;
pub mod check;
pub mod completion;
pub mod create;
pub mod describe;
pub mod flags;
pub mod guard;
pub mod input_args;
pub mod plan;
pub mod snapshot;
pub mod uncovered;
pub mod version;
pub mod views;
pub mod why;
