//! ResourceQuota validation with kube-apiserver's rules and messages.
//!
//! [`validate_resource_quota`] reproduces what the API server checks when a ResourceQuota is
//! created (`ValidateResourceQuota` in `pkg/apis/core/validation/validation.go`, plus the
//! object-metadata checks of `ValidateObjectMeta`), after the API defaulting that matters
//! (every quantity rounded up to milli units). Each problem is a [`FieldError`] whose
//! `Display` is the server's rendering, e.g.
//! `spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota`, and
//! [`render_server_message`] builds the whole refusal as kubectl prints it
//! (`The ResourceQuota "q" is invalid: ...`, one error inline, several as `\n* ` lines).
//!
//! Rules follow current servers (1.3x): the `CrossNamespacePodAffinity` and
//! `VolumeAttributesClass` scopes exist. The wording is the release's, as [`ValueStyle`] says:
//! a refused value that is not a string or a number as JSON (1.34 on) or as Go's `%#v` (a
//! `must be an integer` quantity then as the server's `resource.Quantity{...}` struct, its
//! cached string `s` included, [`go_quantity`]); the exists-only operator rule as current
//! servers word it (`must be 'Exists' when scope is any of ..., ResourceQuotaScopeNotBestEffort
//! or ResourceQuotaScopeCrossNamespacePodAffinity`) or as 1.20 does (`must be 'Exist' only
//! operator when scope is any of ... and ResourceQuotaScopeNotBestEffort`).
//!
//! Deliberate differences from the server's text:
//! - a `must be an integer` quantity that Go holds as an `inf.Dec` (more than 18 digits, finer
//!   than nano units, or a fractional binary suffix such as `1.5Ki`) is printed as its
//!   canonical string: Go prints that struct with a pointer's address;
//! - resource names are quoted (`"foo"`) as older servers print them (the v1.20 corpus does);
//!   current servers pass a `core.ResourceName`, which Go prints unquoted;
//! - a quantity that does not parse is reported as a [`FieldErrorKind::Unparseable`] error on
//!   its field (the server refuses the whole body while decoding, before validation; see
//!   [`render_server_message`]).
//!
//! Three jobs, a file each: [`FieldError`] and the server's rendering of a refusal
//! (`field_error.rs`); the quota rules, in the server's order, field by field, so a message
//! can be traced to the rule that makes it (`quota_rules.rs`); and a refused value written as
//! the release prints it, JSON or Go's `%q` and `%#v` (`go_format.rs`).

mod field_error;
mod go_format;
mod quota_rules;

pub use field_error::{has_decode_errors, render_server_message, status_message, FieldError, FieldErrorKind};
pub use go_format::{go_quantity, go_quote, go_scope_selector, go_scopes, go_string_slice, ValueStyle};
pub use quota_rules::{
    reasons, validate_quota_metadata, validate_quota_resource_name, validate_quota_resource_value, validate_resource_quota, validate_resource_quota_spec,
    TOTAL_ANNOTATION_SIZE_LIMIT,
};
