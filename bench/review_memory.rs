//! One AdmissionReview decided the way `guard serve` decides it (`review::parse`, then
//! `review::decide` on an empty state of its namespace), for bench/review-memory.sh to measure
//! with /usr/bin/time -v: the peak of one review, apart from the server around it.
//!
//!     cargo run --release --example review_memory -- BODY_FILE

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: review_memory BODY_FILE");
        std::process::exit(2);
    };
    let body = std::fs::read(&file).unwrap();
    let request = kubectl_quota::guard::review::parse(body).unwrap_or_else(|e| panic!("{e}"));
    let namespace = request.namespace.clone();
    let opts = kubectl_quota_engine::check::CheckOptions { namespace, ..Default::default() };
    let answer = kubectl_quota::guard::review::decide(request, Default::default(), &opts, false);
    println!("{:?}: {} warnings", answer.why, answer.warnings.len());
}
