// The "policy" operation: MutatingAdmissionPolicy and ValidatingAdmissionPolicy admission
// as kube-apiserver runs it, with upstream's own plugins
// (k8s.io/apiserver/pkg/admission/plugin/policy/mutating and .../validating) wired to a fake
// clientset that holds the request's namespace, ConfigMaps, policies and bindings.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	api "k8s.io/kubernetes/pkg/apis/core"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

// policyRequest is the "policy" operation's own part of a request.
type policyRequest struct {
	// Policies are admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy,
	// ValidatingAdmissionPolicyBinding, MutatingAdmissionPolicy and
	// MutatingAdmissionPolicyBinding objects, in any order.
	Policies []json.RawMessage `json:"policies,omitempty"`
	// Params are the ConfigMaps the policies may read.
	Params []corev1.ConfigMap `json:"params,omitempty"`
	// Pods are created one after the other (each on its own, against the same cluster).
	Pods []json.RawMessage `json:"pods,omitempty"`
}

type policyAnswer struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Results []policyResult  `json:"results"`
}

type podResources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

type policyResult struct {
	// Allowed: neither plugin refused (and the pod is valid).
	Allowed bool `json:"allowed"`
	// Stage is the plugin that refused: "mutating" or "validating".
	Stage string `json:"stage,omitempty"`
	// Message, Reason and Code are the Status the server sends for the refusal.
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Code    int32  `json:"code,omitempty"`
	// Invalid is the pod strategy's validation of the pod the mutating policies left (a 422
	// before validating admission runs).
	Invalid  string   `json:"invalid,omitempty"`
	Warnings []string `json:"warnings"`
	// Mutated: the mutating plugin changed the pod.
	Mutated bool `json:"mutated"`
	// Containers and InitContainers: each container's resources after the mutating policies
	// and the scheme's defaulting, by name.
	Containers     map[string]podResources `json:"containers,omitempty"`
	InitContainers map[string]podResources `json:"initContainers,omitempty"`
	// Usage is what quota's pod evaluator charges for the pod (admitted pods only).
	Usage map[string]string `json:"usage,omitempty"`
}

// allowAll is the authorizer the plugins are given; the generated policies never ask it.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// The OpenAPI v3 document of core/v1 (Pod and what it references), as kube-apiserver builds
// it from the generated definitions, which the mutating plugin's type converter reads
// through discovery.
var (
	podOpenAPIOnce sync.Once
	podOpenAPI     []byte
	podOpenAPIErr  error
)

func corev1OpenAPI() ([]byte, error) {
	podOpenAPIOnce.Do(func() {
		namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme)
		cfg := &common.OpenAPIV3Config{GetDefinitions: generatedopenapi.GetOpenAPIDefinitions, GetDefinitionName: namer.GetDefinitionName}
		defs, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, corev1.Pod{}.OpenAPIModelName())
		if err != nil {
			podOpenAPIErr = err
			return
		}
		doc := &spec3.OpenAPI{Version: "3.0.0", Components: &spec3.Components{Schemas: defs}}
		podOpenAPI, podOpenAPIErr = json.Marshal(doc)
	})
	return podOpenAPI, podOpenAPIErr
}

// openAPIClient serves corev1OpenAPI at api/v1 and says when it was first asked.
type openAPIClient struct {
	asked     chan struct{}
	askedOnce *sync.Once
}

type openAPIGroupVersion struct{}

func (openAPIGroupVersion) Schema(string) ([]byte, error) { return corev1OpenAPI() }
func (openAPIGroupVersion) ServerRelativeURL() string     { return "/openapi/v3/api/v1?hash=oracle" }

func (c openAPIClient) Paths() (map[string]openapi.GroupVersion, error) {
	defer c.askedOnce.Do(func() { close(c.asked) })
	return map[string]openapi.GroupVersion{"api/v1": openAPIGroupVersion{}}, nil
}

type discoveryWithOpenAPI struct {
	*fakediscovery.FakeDiscovery
	client openAPIClient
}

func (d discoveryWithOpenAPI) OpenAPIV3() openapi.Client { return d.client }

// clientWithOpenAPI is the fake clientset whose discovery serves the OpenAPI document.
type clientWithOpenAPI struct {
	*fake.Clientset
	discovery discoveryWithOpenAPI
}

func (c clientWithOpenAPI) Discovery() discovery.DiscoveryInterfaces { return c.discovery }

var _ kubernetes.Interface = clientWithOpenAPI{}

// policyStack is the two plugins over one cluster.
type policyStack struct {
	mutating   *mutating.Plugin
	validating *validating.Plugin
	stop       chan struct{}
	openAPI    chan struct{}
	// openAPIFetched: waitForOpenAPI returned once (each stack serves one goroutine).
	openAPIFetched bool
}

func newPolicyStack(ns *corev1.Namespace, params []corev1.ConfigMap, policies []json.RawMessage) (*policyStack, error) {
	objs := []runtime.Object{ns}
	var dynObjs []runtime.Object
	for i := range params {
		cm := params[i].DeepCopy()
		if cm.Namespace == "" {
			cm.Namespace = ns.Name
		}
		objs = append(objs, cm)
		dynObjs = append(dynObjs, cm.DeepCopy())
	}
	for i, raw := range policies {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, fmt.Errorf("bad policy %d: %w", i, err)
		}
		if tm.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("bad policy %d: apiVersion %q (want %s)", i, tm.APIVersion, admissionregistrationv1.SchemeGroupVersion)
		}
		var obj runtime.Object
		switch tm.Kind {
		case "ValidatingAdmissionPolicy":
			obj = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		case "ValidatingAdmissionPolicyBinding":
			obj = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		case "MutatingAdmissionPolicy":
			obj = &admissionregistrationv1.MutatingAdmissionPolicy{}
		case "MutatingAdmissionPolicyBinding":
			obj = &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
		default:
			return nil, fmt.Errorf("bad policy %d: kind %q", i, tm.Kind)
		}
		if err := strict(raw, obj); err != nil {
			return nil, fmt.Errorf("bad policy %d: %w", i, err)
		}
		// As the API server stores them: defaulted (failurePolicy Fail, matchPolicy
		// Equivalent, empty selectors, reinvocationPolicy Never, ...).
		legacyscheme.Scheme.Default(obj)
		objs = append(objs, obj)
	}
	client := fake.NewSimpleClientset(objs...)
	s := &policyStack{stop: make(chan struct{}), openAPI: make(chan struct{})}
	wrapped := clientWithOpenAPI{
		Clientset: client,
		discovery: discoveryWithOpenAPI{
			FakeDiscovery: client.Discovery().(*fakediscovery.FakeDiscovery),
			client:        openAPIClient{asked: s.openAPI, askedOnce: &sync.Once{}},
		},
	}
	factory := informers.NewSharedInformerFactory(wrapped, 0)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClient(clientscheme.Scheme, dynObjs...)

	mp, err := mutating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	mp.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	vp, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	s.mutating, s.validating = mp, vp
	for _, p := range []interface {
		SetExternalKubeInformerFactory(informers.SharedInformerFactory)
		SetExternalKubeClientSet(kubernetes.Interface)
		SetRESTMapper(meta.RESTMapper)
		SetDynamicClient(dynamic.Interface)
		SetDrainedNotification(<-chan struct{})
		SetUnconditionalAuthorizer(authorizer.UnconditionalAuthorizer)
		ValidateInitialization() error
	}{mp, vp} {
		p.SetExternalKubeInformerFactory(factory)
		p.SetExternalKubeClientSet(wrapped)
		p.SetRESTMapper(mapper)
		p.SetDynamicClient(dyn)
		p.SetDrainedNotification(s.stop)
		p.SetUnconditionalAuthorizer(allowAll{})
		if err := p.ValidateInitialization(); err != nil {
			s.close()
			return nil, err
		}
	}
	// The params' informer, started with the others (the policy source asks the factory
	// for it), so the first lookup finds it synced.
	factory.Core().V1().ConfigMaps().Informer()
	factory.Start(s.stop)
	factory.WaitForCacheSync(s.stop)
	if !mp.WaitForReady() || !vp.WaitForReady() {
		s.close()
		return nil, errors.New("the policy plugins did not become ready")
	}
	return s, nil
}

func (s *policyStack) close() { close(s.stop) }

// waitForOpenAPI waits until the mutating plugin's type converter fetched the OpenAPI paths
// (it does so in the background when the plugin starts, as a server does long before its
// first request).
func (s *policyStack) waitForOpenAPI() {
	if s.openAPIFetched {
		return
	}
	s.openAPIFetched = true
	select {
	case <-s.openAPI:
		time.Sleep(2 * time.Millisecond) // the fetched paths are stored right after
	case <-time.After(10 * time.Second):
	}
}

// warnings records what the plugins warn, as the server's recorder does: each text once,
// in order.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.texts {
		if t == text {
			return
		}
	}
	w.texts = append(w.texts, text)
}

func policyOp(req *request) (any, error) {
	if len(req.Pods) == 0 {
		return nil, errors.New(`bad request: op "policy" needs "pods"`)
	}
	ns := req.Namespace
	if ns == "" {
		ns = "ns"
	}
	labels := map[string]string{"kubernetes.io/metadata.name": ns}
	for k, v := range req.Labels {
		labels[k] = v
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	stack, err := newPolicyStack(namespace, req.Params, req.Policies)
	if err != nil {
		return nil, err
	}
	defer stack.close()
	ans := policyAnswer{ID: req.ID, Results: make([]policyResult, 0, len(req.Pods))}
	for i, raw := range req.Pods {
		var r policyResult
		for attempt := 0; ; attempt++ {
			r, err = stack.admitPod(raw, ns)
			if err != nil {
				return nil, fmt.Errorf("pod %d: %w", i, err)
			}
			// The type converter not having fetched the OpenAPI yet is a start-up race of
			// the plugin, not an answer: ask again.
			if attempt < 3 && r.Code == 503 && strings.Contains(r.Message, "There can be a delay") {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			break
		}
		ans.Results = append(ans.Results, r)
	}
	return ans, nil
}

// admitPod creates one pod: decoded and defaulted, the mutating plugin (and its reinvocation
// when it asks for one), the pod strategy's PrepareForCreate and Validate, then the
// validating plugin, as the API server orders them.
func (s *policyStack) admitPod(raw json.RawMessage, ns string) (policyResult, error) {
	res := policyResult{Warnings: []string{}}
	d, err := decodeObject(raw, "")
	if err != nil {
		return res, fmt.Errorf("bad pod: %w", err)
	}
	pod, ok := d.obj.(*api.Pod)
	if !ok {
		return res, fmt.Errorf("not a Pod: %s", d.gvk.Kind)
	}
	pod.Namespace = ns
	rec := &warnings{}
	ctx := warning.WithWarningRecorder(requestContext(ns), rec)
	attrs := admission.NewAttributesRecord(pod, nil, d.gvk, ns, pod.Name, d.gvr, "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "someone"})
	o := admission.NewObjectInterfacesFromScheme(legacyscheme.Scheme)
	before := pod.DeepCopy()
	s.waitForOpenAPI()
	refuse := func(stage string, err error) policyResult {
		st := responsewriters.ErrorToAPIStatus(err)
		res.Stage, res.Message, res.Reason, res.Code = stage, st.Message, string(st.Reason), st.Code
		res.Warnings = append(res.Warnings, rec.texts...)
		return res
	}
	if err := s.mutating.Admit(ctx, attrs, o); err != nil {
		return refuse("mutating", err), nil
	}
	if rc := attrs.GetReinvocationContext(); rc.ShouldReinvoke() {
		rc.SetIsReinvoke()
		if err := s.mutating.Admit(ctx, attrs, o); err != nil {
			return refuse("mutating", err), nil
		}
	}
	pod = attrs.GetObject().(*api.Pod)
	res.Mutated = !apiequalityPods(before, pod)
	podregistry.Strategy.PrepareForCreate(ctx, pod)
	if errs := podregistry.Strategy.Validate(ctx, pod); len(errs) > 0 {
		res.Invalid = errs.ToAggregate().Error()
	}
	res.Containers, res.InitContainers = containerResources(pod.Spec.Containers), containerResources(pod.Spec.InitContainers)
	if res.Invalid != "" {
		res.Warnings = append(res.Warnings, rec.texts...)
		return res, nil
	}
	if err := s.validating.Validate(ctx, attrs, o); err != nil {
		return refuse("validating", err), nil
	}
	res.Allowed = true
	res.Warnings = append(res.Warnings, rec.texts...)
	reg, err := registryFor(nil)
	if err != nil {
		return res, err
	}
	u, err := reg.Get(schema.GroupResource{Resource: "pods"}).Usage(pod)
	if err != nil {
		return res, fmt.Errorf("usage: %w", err)
	}
	res.Usage = quantities(u)
	return res, nil
}

func apiequalityPods(a, b *api.Pod) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func containerResources(cs []api.Container) map[string]podResources {
	if len(cs) == 0 {
		return nil
	}
	m := map[string]podResources{}
	for _, c := range cs {
		m[c.Name] = podResources{Requests: internalQuantities(c.Resources.Requests), Limits: internalQuantities(c.Resources.Limits)}
	}
	return m
}

func internalQuantities(l api.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	m := make(map[string]string, len(l))
	for _, n := range names {
		q := l[api.ResourceName(n)]
		m[n] = q.String()
	}
	return m
}
