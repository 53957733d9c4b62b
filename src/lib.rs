//! kubectl-quota's evaluation library: a pure replay of kube-apiserver's ResourceQuota
//! admission, with no I/O.
//!
//! Data flows one way, one module per step:
//! [`manifest`] (files -> JSON documents) -> [`objects`] (typed models, exact quantities) ->
//! [`defaulting`] (what the API server changes before quota) -> [`usage`] (what an object
//! consumes) -> [`scopes`] (which quotas select it) -> [`admission`] (the verdict and message)
//! -> [`check`] (documents in order, workloads replayed) -> [`render`] (text, JSON, YAML).
//! [`quantity`], [`resources`], [`resource_names`] and [`validation`] are shared by every step.

pub mod admission;
pub mod admission_config;
pub mod check;
pub mod cli;
pub mod completion;
pub mod create;
pub mod defaulting;
pub mod describe;
pub mod hints;
pub mod manifest;
pub mod objects;
pub mod quantity;
pub mod render;
pub mod resource_names;
pub mod resources;
pub mod scopes;
pub mod usage;
pub mod validation;
