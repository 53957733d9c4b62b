//! Rendering the engine's report data for people (text) and programs (JSON, YAML).

pub mod capacity;
pub mod check;
pub mod describe;
pub mod plan;
pub mod table;
pub mod why;
pub mod yaml;
