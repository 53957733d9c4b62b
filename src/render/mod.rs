//! Rendering the engine's report data for people (text) and programs (JSON, YAML), and
//! `check`'s for CI (JUnit XML, GitHub Actions annotations).

pub mod capacity;
pub mod check;
pub mod describe;
pub mod github;
pub mod junit;
pub mod output;
pub mod plan;
pub mod table;
pub mod why;
pub mod yaml;
