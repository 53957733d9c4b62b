//! The one exit-status rule of every subcommand: 0 success, 1 the cluster (or the replayed
//! admission) said no, 2 the input or the environment could not be used.

use kubectl_quota_engine::manifest::InputError;

/// An error that ends the command: the message (printed as `error: ...`) and the exit status.
#[derive(Debug)]
pub struct Fatal(pub String, pub u8);

impl Fatal {
    /// Bad input or an unusable environment: exit status 2.
    pub fn input(msg: impl Into<String>) -> Fatal {
        Fatal(msg.into(), 2)
    }

    /// The server refused or failed: exit status 1.
    pub fn server(msg: impl Into<String>) -> Fatal {
        Fatal(msg.into(), 1)
    }
}

impl From<InputError> for Fatal {
    fn from(e: InputError) -> Self {
        Fatal::input(e.to_string())
    }
}
