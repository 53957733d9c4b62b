//! The `kubectl-quota` plugin: the command line on top of [`kubectl_quota_engine`].
//!
//! Arrows point one way: `main` -> [`app`] -> [`cli`] -> [`commands`] -> ([`input`], [`live`],
//! [`render`], [`global`]) -> the engine. [`live`] is the one module that talks to a cluster; [`input`]
//! the one that reads files; [`error`] holds the exit-status rule every subcommand shares;
//! [`escape`] makes control characters visible in every text the plugin prints. [`guard`] is
//! the admission webhook (`guard serve`): the engine's answers from the API server itself.

pub mod alloc;
pub mod app;
pub mod cli;
pub mod commands;
pub mod error;
pub mod escape;
pub mod global;
pub mod guard;
pub mod input;
pub mod live;
pub mod render;
