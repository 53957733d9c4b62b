//! The connections open: at most a cap of them, the longest unproductive one reclaimed to make
//! room for a new one, and each tracked from accept to close.

use super::*;

/// Connections that may be closing past the cap at once (each reclaimed one ends at its next
/// poll; one whose review had just been read first answers it).
pub(super) const MAX_CLOSING: usize = 64;

/// The connections open: for each, since when it has been unproductive (`None`: a review of
/// it is being decided or answered), whether it was asked to close, and how to ask it.
#[derive(Default)]
pub(super) struct Open {
    pub(super) next: u64,
    pub(super) conns: std::collections::HashMap<u64, Conn>,
    /// Of `conns`, those asked to close (they no longer count against the cap).
    pub(super) closing: usize,
}

pub(super) struct Conn {
    pub(super) since: Option<Instant>,
    pub(super) closing: bool,
    pub(super) close: Arc<tokio::sync::Notify>,
}

/// What the accept loop does with a new connection.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Admit {
    /// Served (in the slot of the connection with this id, asked to close, when `Some`).
    Serve(Option<u64>),
    /// Closed at once: every slot holds a review being decided.
    Refuse,
}

impl Open {
    /// Makes room for a new connection under `cap`: nothing to do below it; at it, the
    /// connection unproductive the longest (and not asked already) is asked to close.
    pub(super) fn admit(&mut self, cap: usize) -> Admit {
        if self.conns.len() - self.closing < cap {
            return Admit::Serve(None);
        }
        if self.closing >= MAX_CLOSING {
            return Admit::Refuse;
        }
        let oldest = self.conns.iter().filter(|(_, c)| !c.closing).filter_map(|(id, c)| c.since.map(|t| (t, *id))).min();
        let Some((_, id)) = oldest else { return Admit::Refuse };
        let c = self.conns.get_mut(&id).expect("found above");
        c.closing = true;
        c.close.notify_one();
        self.closing += 1;
        Admit::Serve(Some(id))
    }
}

/// One connection's place in [`Open`]; leaving it (the connection ended) removes it.
pub(super) struct Tracked {
    pub(super) id: u64,
    pub(super) open: Arc<std::sync::Mutex<Open>>,
    pub(super) close: Arc<tokio::sync::Notify>,
    pub(super) app: Arc<App>,
}

pub(super) fn lock(open: &std::sync::Mutex<Open>) -> std::sync::MutexGuard<'_, Open> {
    open.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tracked {
    /// Takes a place for a new connection, unproductive from now; `None` when it must be
    /// refused (see [`Open::admit`]).
    pub(super) fn admit(open: &Arc<std::sync::Mutex<Open>>, cap: usize, app: &Arc<App>) -> Option<Tracked> {
        let mut o = lock(open);
        match o.admit(cap) {
            Admit::Refuse => {
                app.metrics.connection_refused();
                return None;
            }
            Admit::Serve(Some(_)) => app.metrics.connection_reclaimed(),
            Admit::Serve(None) => {}
        }
        let close = Arc::new(tokio::sync::Notify::new());
        let id = o.next;
        o.next += 1;
        o.conns.insert(id, Conn { since: Some(Instant::now()), closing: false, close: close.clone() });
        app.metrics.connection_opened();
        Some(Tracked { id, open: open.clone(), close, app: app.clone() })
    }

    /// A review's body has been read, and it is being decided (`busy`), or its answer is
    /// ready (`!busy`: unproductive again from now, waiting for the next request).
    pub(super) fn set_busy(&self, busy: bool) {
        if let Some(c) = lock(&self.open).conns.get_mut(&self.id) {
            c.since = (!busy).then(Instant::now);
        }
    }

    pub(super) fn busy(&self) -> bool {
        lock(&self.open).conns.get(&self.id).is_some_and(|c| c.since.is_none())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut o = lock(&self.open);
        if o.conns.remove(&self.id).is_some_and(|c| c.closing) {
            o.closing -= 1;
        }
        self.app.metrics.connection_closed();
    }
}

/// Whether `accept` failed for want of a resource (file descriptors, memory), which waiting a
/// moment may bring back; other failures (a connection reset before it was accepted) are
/// the one connection's.
pub(super) fn exhausted(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM));
    #[cfg(not(unix))]
    return e.kind() == std::io::ErrorKind::OutOfMemory;
}
