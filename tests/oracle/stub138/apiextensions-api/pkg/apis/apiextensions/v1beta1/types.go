// Package v1beta1 stands in for k8s.io/apiextensions-api/pkg/apis/apiextensions/v1beta1 (v0.38.0-beta.0):
// the types' names only, with the model names and schema type/format upstream gives them
// (copied from k8s.io/apiextensions-apiserver v0.37.2, where these types lived; the names
// are the ones kubernetes v1.38.0-beta.0's api/openapi-spec publishes).
package v1beta1

type ConversionRequest struct{}
type ConversionResponse struct{}
type ConversionReview struct{}
type CustomResourceColumnDefinition struct{}
type CustomResourceConversion struct{}
type CustomResourceDefinition struct{}
type CustomResourceDefinitionCondition struct{}
type CustomResourceDefinitionList struct{}
type CustomResourceDefinitionNames struct{}
type CustomResourceDefinitionSpec struct{}
type CustomResourceDefinitionStatus struct{}
type CustomResourceDefinitionVersion struct{}
type CustomResourceSubresourceScale struct{}
type CustomResourceSubresourceStatus struct{}
type CustomResourceSubresources struct{}
type CustomResourceValidation struct{}
type ExternalDocumentation struct{}
type JSON struct{}
type JSONSchemaProps struct{}
type JSONSchemaPropsOrArray struct{}
type JSONSchemaPropsOrBool struct{}
type JSONSchemaPropsOrStringArray struct{}
type SelectableField struct{}
type ServiceReference struct{}
type ValidationRule struct{}
type WebhookClientConfig struct{}

func (_ JSON) OpenAPISchemaType() []string                         { return nil }
func (_ JSON) OpenAPISchemaFormat() string                         { return "" }
func (_ JSONSchemaPropsOrArray) OpenAPISchemaType() []string       { return nil }
func (_ JSONSchemaPropsOrArray) OpenAPISchemaFormat() string       { return "" }
func (_ JSONSchemaPropsOrBool) OpenAPISchemaType() []string        { return nil }
func (_ JSONSchemaPropsOrBool) OpenAPISchemaFormat() string        { return "" }
func (_ JSONSchemaPropsOrStringArray) OpenAPISchemaType() []string { return nil }
func (_ JSONSchemaPropsOrStringArray) OpenAPISchemaFormat() string { return "" }
