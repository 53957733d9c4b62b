//! kubectl-quota's engine: a pure replay of kube-apiserver's ResourceQuota admission.
//!
//! No command line, no cluster, no terminal, no files: text and plain values in, plain values
//! out. The `kubectl-quota` plugin reads files and the live API and renders what this returns.
//!
//! Data flows one way, one module per step, each importing only from steps before it:
//!
//! 1. [`manifest`]: text -> JSON documents that remember where they came from;
//! 2. [`objects`]: documents -> typed objects with exact quantities ([`pod_totals`]: a pod's
//!    totals, which defaulting and usage both need);
//! 3. [`defaulting`]: what the API server changes before quota (defaults, LimitRanger,
//!    Priority, RuntimeClass, DefaultStorageClass); [`limit_ranger`]: what LimitRanger then
//!    refuses (min, max, limit-to-request ratio);
//! 4. [`usage`]: which evaluator handles an object and what it consumes;
//! 5. [`scopes`]: which quotas' scopes and selectors select it;
//! 6. [`admission`]: one object against the namespace's quotas: the verdict and the server's
//!    message;
//! 7. [`check`]: documents in order, workloads replayed through their controllers;
//! 8. [`report`]: data built from the check's result (hints, describe's view); [`plan`],
//!    [`why`] and [`capacity`] (the cluster's quotas against its nodes) answer on top.
//!
//! Shared by every step: [`quantity`] (exact decimal arithmetic), [`resource_names`],
//! [`resources`] (resource lists), [`validation`] (the server's ResourceQuota validation) and
//! [`admission_config`] (the server's `limitedResources`); [`version`] holds every rule that
//! depends on the Kubernetes release, and the steps read its switches. ARCHITECTURE.md lists
//! every arrow allowed, and a test holds the code to it.

pub mod admission;
pub mod admission_config;
pub mod capacity;
pub mod check;
pub mod defaulting;
pub mod dra;
pub mod limit_ranger;
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
pub mod scopes;
pub mod usage;
pub mod validation;
pub mod version;
pub mod why;
