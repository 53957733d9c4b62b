// A stand-in for k8s.io/apiextensions-api v0.38.0-beta.0, which the Go module proxy refuses
// (403). Only k8s.io/kubernetes/pkg/generated/openapi imports it in the oracle's 1.38 build,
// and only for the CRD types' OpenAPI model names and the schema type/format of the JSON*
// types; the schemas themselves are in that generated file. See ../../README.md.
module k8s.io/apiextensions-api

go 1.26.0
