//! kubectl-quota's engine: a pure replay of kube-apiserver's ResourceQuota admission.
//!
//! No command line, no cluster, no terminal, no files: text and plain values in, plain values
//! out. The `kubectl-quota` plugin reads files and the live API and renders what this returns.
//!
//! Data flows one way, one module per step, each importing only from steps before it:
//!
//! 1. [`manifest`]: text -> JSON documents that remember where they came from;
//! 2. [`objects`]: documents -> typed objects with exact quantities ([`pod_totals`]: a pod's
//!    totals; [`dra`]: what ResourceClaims consume and the claims a pod's templates make);
//! 3. [`admission`]: one request through the API server's admission chain, in its plugin
//!    order: every plugin's mutating half ([`admission::namespace_lifecycle`],
//!    [`admission::limit_ranger`]'s defaults, [`admission::priority`],
//!    [`admission::default_storage_class`], [`admission::runtime_class`]), the registry's own
//!    [`defaulting`] and [`object_validation`], then every validating half (LimitRanger's min
//!    and max, [`admission::pvc_resize`], RuntimeClass) and [`admission::resource_quota`] last
//!    (its [`usage`](admission::usage) evaluators, [`scopes`](admission::scopes) and the verdict
//!    with the server's message);
//! 4. [`rollout`]: a changed template's rollout, step by step on the quotas' counters;
//!    [`autoscaling`]: the replicas an HPA or KEDA sets a workload to, and how many of its
//!    maximum quota lets run;
//! 5. [`check`]: documents in order; each decided, then its existing workload and rollout,
//!    the pods its controllers create, and what later documents see;
//! 6. [`report`]: data built from the check's result (hints, describe's view); [`plan`],
//!    [`why`] and [`capacity`] (the cluster's quotas against its nodes) answer on top.
//!
//! Shared by every step: [`quantity`] (exact decimal arithmetic), [`resource_names`],
//! [`resources`] (resource lists), [`validation`] (the server's ResourceQuota validation) and
//! [`admission_config`] (the server's `limitedResources`); [`version`] holds every rule that
//! depends on the Kubernetes release, and the steps read its switches. ARCHITECTURE.md lists
//! every arrow allowed, and a test holds the code to it.

pub mod admission;
pub mod admission_config;
pub mod autoscaling;
pub mod capacity;
pub mod cel;
pub mod check;
pub mod defaulting;
pub mod dra;
pub mod kueue;
pub mod manifest;
pub mod object_validation;
pub mod objects;
pub mod plan;
pub mod pod_totals;
pub mod quantity;
pub mod report;
pub mod resource_names;
pub mod resources;
pub mod rollout;
pub mod validation;
pub mod version;
pub mod why;
