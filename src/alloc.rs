//! The process's allocator: mimalloc, set to give freed memory back at once.
//!
//! `check` decides on one thread and renders on another (see `commands::check`). With glibc's
//! malloc, memory one thread freed went back to the other thread's arena, where it could not
//! be reused, and the threads contended for the arenas' locks; mimalloc frees across threads
//! cheaply. Its defaults keep freed memory committed for a second and commit whole arenas
//! ahead of use, which raised the peak by 30–60 MB on the benchmarks (100,000 tiny pods:
//! 199 MB). Committing on demand and purging after 10 ms keeps the peak where glibc's was.
//! Purging at once did too, but then memory freed by one document was handed back to the
//! system and faulted in again by the next: a fifth of the deciding thread's time went to
//! the kernel (3,000 scoped quotas × 3,000 pods: 1.9 s at once, 1.2 s after 10 ms).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc 3's option numbers (`mi_option_e` in the `mimalloc.h` that the locked
/// libmimalloc-sys builds; its Rust bindings do not name these two yet). The test below holds
/// them to their documented defaults.
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays committed before it goes back to the system, in ms.
const PURGE_AFTER_MS: std::os::raw::c_long = 10;

/// Purge freed memory soon and commit arenas on demand. Called first thing in `main`.
pub fn configure() {
    // SAFETY: `mi_option_set` stores a value in mimalloc's option table (thread-safe, any
    // time); both values are valid for their options.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_AFTER_MS);
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_numbers_name_the_options_mimalloc_documents() {
        // Unset, each option has the default of mimalloc's options.c: purge delay 1,000 ms,
        // eager arena commit 2 (only where the OS overcommits). A renumbered enum would read
        // other options here.
        // SAFETY: `mi_option_get` reads mimalloc's option table.
        let (delay, eager) = unsafe { (libmimalloc_sys::mi_option_get(PURGE_DELAY), libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT)) };
        assert!(matches!((delay, eager), (1000, 2) | (PURGE_AFTER_MS, 0)), "purge delay {delay}, arena eager commit {eager}");
    }
}
