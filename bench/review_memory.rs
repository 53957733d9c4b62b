//! One AdmissionReview decided the way `guard serve` decides it (`review::parse`, then
//! `review::decide` on the state of its namespace), for bench/review-memory.sh and
//! bench/review-shapes.sh to measure with /usr/bin/time -v: the peak and the time of one
//! review, apart from the server around it. The state is empty, or read from STATE_FILE as
//! `check --state` reads one (a quota, a bound admission policy, ...).
//!
//!     cargo run --release --example review_memory -- BODY_FILE [STATE_FILE]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: review_memory BODY_FILE [STATE_FILE]");
        std::process::exit(2);
    };
    let body = std::fs::read(file).unwrap();
    let request = kubectl_quota::guard::review::parse(body).unwrap_or_else(|e| panic!("{e}"));
    let namespace = request.namespace.clone();
    let state = match args.get(1) {
        Some(f) => {
            let read = kubectl_quota::input::load_state(std::slice::from_ref(f)).unwrap_or_else(|_| panic!("{f}: not a state file"));
            kubectl_quota_engine::check::ClusterState::from_objects(read.objects, &namespace)
        }
        None => Default::default(),
    };
    let opts = kubectl_quota_engine::check::CheckOptions { namespace, ..Default::default() };
    let started = std::time::Instant::now();
    let answer = kubectl_quota::guard::review::decide(request, state, &opts, false);
    println!("{:?}: {} warnings, decided in {} ms", answer.why, answer.warnings.len(), started.elapsed().as_millis());
}
