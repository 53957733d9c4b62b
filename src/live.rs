//! The live API: connection like kubectl, reads (paginated, concurrent) and the one write
//! (`create`). Everything it reads is turned into the library's objects through the same
//! decoder as files, so offline and live checks share every rule.
//!
//! `check` and `describe` only ever issue GET/LIST requests.
//!
//! One room per job, as kube-rs keeps config, api and discovery apart:
//! `connect` (kubeconfig, flags, retries), `body` (the shared response-body cap),
//! `errors` (kubectl's wording of failures), `list` (guarded pagination), `discovery`,
//! `state` (what a live check reads), `snapshot`, `workload` (`why`'s reads),
//! `capacity` (the cluster views' reads), `create` (the one write of the quota commands), and
//! the guard's: `watch` (list+watch for its caches) and `guard` (its install, uninstall and status). Commands use the names re-exported here.

mod body;
mod capacity;
mod connect;
mod create;
mod discovery;
mod dry_run;
mod errors;
mod existing;
pub mod guard;
mod list;
mod snapshot;
mod state;
mod watch;
mod workload;

pub use body::Budgeted;
pub use capacity::{collect_view, View};
pub use connect::{connect, load_kubeconfig, parse_duration, Bound, DEFAULT_DEADLINE};
pub use create::create_quota;
pub use discovery::server_version;
pub use dry_run::{dry_run_pod, dry_runs, Asked};
pub use errors::{ReadError, RequestError};
pub use existing::resolve_and_existing;
pub use list::{for_each_object, for_each_quota, list_all, list_objects, namespace_names, priority_class_names, quotas};
pub use snapshot::{snapshot, Scope, Snapshot};
pub use state::{cluster_state, kueue_queues, live_state, namespaces_existing, scale_target, scale_target_key, LiveState};
pub use watch::{watch_kind, Change};
pub use workload::{workload, Workload, WorkloadRead};

use kube::Client;

/// A connection and the namespace commands default to.
#[derive(Clone)]
pub struct Conn {
    pub client: Client,
    pub namespace: String,
    /// The server's URL, named in connection errors.
    pub server: String,
    /// How long the server may take: `--request-timeout` on each request as a whole
    /// (connect, headers and the entire body, not each read), or else the command's deadline.
    pub timeout: Bound,
}

impl Conn {
    /// The connection for a server that runs for ever (`guard serve`): its requests are not
    /// held to the command's deadline, which is meant for commands that answer and end.
    /// An explicit `--request-timeout` still bounds each request.
    pub fn serving(mut self) -> Conn {
        if let Bound::Deadline { .. } = self.timeout {
            self.timeout = Bound::None;
        }
        self
    }
}
