// quota-oracle answers ResourceQuota admission questions with upstream Kubernetes'
// own code (k8s.io/kubernetes v1.37.2 and its staging modules v0.37.2, or with build tag
// k138 and go.1.38.mod the 1.38 ones; release_*.go hold what differs): the quota
// evaluators the API server registers (pods, services, persistent volume claims,
// resource claims, object counts), upstream's API defaulting, and CheckRequest of the
// ResourceQuota admission plugin. kubectl-quota's engine is compared with it in
// tests/oracle.rs.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on stdout
// (flushed after each). See README.md in this directory.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	quotaplugin "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/capabilities"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	psadmission "k8s.io/pod-security-admission/admission"
	psadmissionapi "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	pspolicy "k8s.io/pod-security-admission/policy"
	"k8s.io/klog/v2"
	kjson "sigs.k8s.io/json"
)

// request is the union of all operations' fields.
type request struct {
	// ID, if given, is echoed back unchanged so callers can pair answers with questions.
	ID json.RawMessage `json:"id,omitempty"`
	Op string          `json:"op"`

	// op "usage" and "admit": the object (any namespaced kind; apiVersion and kind required).
	Object json.RawMessage `json:"object,omitempty"`
	// Resource overrides the plural guessed from the kind (only for object counts).
	Resource string `json:"resource,omitempty"`
	// DeviceClasses are the cluster's DeviceClasses (resource.k8s.io/v1), which decide
	// the DRA extended resource names the resource claim evaluator charges.
	DeviceClasses []resourcev1.DeviceClass `json:"deviceClasses,omitempty"`

	// op "admit" and "limits"
	Operation        string                 `json:"operation,omitempty"` // create (default) or update
	Subresource      string                 `json:"subresource,omitempty"`
	OldObject        json.RawMessage        `json:"oldObject,omitempty"`
	Namespace        string                 `json:"namespace,omitempty"`
	Quotas           []corev1.ResourceQuota `json:"quotas,omitempty"`
	LimitedResources []limitedResource      `json:"limitedResources,omitempty"`

	// op "limits": the namespace's LimitRanges, defaulted as the API server stores them.
	LimitRanges []corev1.LimitRange `json:"limitRanges,omitempty"`

	// op "podsecurity": the namespace's labels, and the PodSecurity defaults
	// (level and version) of the server's configuration; empty: privileged, latest.
	Labels                map[string]string `json:"labels,omitempty"`
	DefaultEnforce        string            `json:"defaultEnforce,omitempty"`
	DefaultEnforceVersion string            `json:"defaultEnforceVersion,omitempty"`

	// op "policy" (also "namespace" and its "labels")
	policyRequest
}

// podSecurityAnswer is PodSecurity admission's verdict on a pod being created.
type podSecurityAnswer struct {
	ID json.RawMessage `json:"id,omitempty"`
	// Invalid is the pod's field validation (a 422 before validating admission runs).
	Invalid string `json:"invalid,omitempty"`
	Allowed bool   `json:"allowed"`
	// Message is the refusal after `is forbidden: `.
	Message string `json:"message,omitempty"`
}

type limitsAnswer struct {
	ID json.RawMessage `json:"id,omitempty"`
	// Invalid is the pod's field validation after LimitRanger's defaults (a 422 before
	// LimitRanger's own validation runs): of the create, or of the update and the stored pod.
	Invalid string `json:"invalid,omitempty"`
	// Ignored: the plugin does not look at this request (SupportsAttributes is false: a pod
	// update other than pods/resize, another subresource).
	Ignored bool `json:"ignored,omitempty"`
	Allowed bool   `json:"allowed"`
	// Message is LimitRanger's refusal (what follows `is forbidden: `).
	Message string `json:"message,omitempty"`
}

// limitedResource is one limitedResources entry as an AdmissionConfiguration file
// spells it (apiserver.config.k8s.io/v1 ResourceQuotaConfiguration).
type limitedResource struct {
	APIGroup      string                                      `json:"apiGroup,omitempty"`
	Resource      string                                      `json:"resource"`
	MatchContains []string                                    `json:"matchContains,omitempty"`
	MatchScopes   []corev1.ScopedResourceSelectorRequirement `json:"matchScopes,omitempty"`
}

type usageAnswer struct {
	ID      json.RawMessage   `json:"id,omitempty"`
	Invalid string            `json:"invalid,omitempty"`
	Ignored bool              `json:"ignored,omitempty"`
	Usage   map[string]string `json:"usage"`
}

type admitAnswer struct {
	ID      json.RawMessage     `json:"id,omitempty"`
	Invalid string              `json:"invalid,omitempty"`
	Ignored bool                `json:"ignored,omitempty"`
	Handled bool                `json:"handled"`
	Allowed bool                `json:"allowed"`
	Message string              `json:"message"`
	Quotas  []map[string]string `json:"quotas"`
}

type gatesAnswer struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Gates map[string]bool `json:"gates"`
}

type errorAnswer struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error"`
}

// reportedGates are the feature gates quota's answers depend on; "gates" reports them
// (with releaseGates, those of one release only).
var reportedGates = append([]featuregate.Feature{
	features.DRAExtendedResource,
	features.DRAAdminAccess,
	features.DRAPrioritizedList,
	features.InPlacePodLevelResourcesVerticalScaling,
	features.PodLevelResources,
	features.VolumeAttributesClass,
}, releaseGates...)

func main() {
	silenceLogs()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	// Answers leave in the order of the questions. "policy" questions, which mostly wait for
	// informers to sync, are answered concurrently; any other waits for them to finish first
	// (some change process-wide settings, as podsecurity does).
	answers := make(chan chan any, 4096)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for ch := range answers {
			b, err := json.Marshal(<-ch)
			if err != nil {
				b, _ = json.Marshal(errorAnswer{Error: "cannot encode answer: " + err.Error()})
			}
			out.Write(b)
			out.WriteByte('\n')
			if err := out.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, "quota-oracle: stdout:", err)
				os.Exit(1)
			}
		}
	}()
	slots := make(chan struct{}, 24)
	var concurrent sync.WaitGroup
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			ch := make(chan any, 1)
			var peek struct {
				Op string `json:"op"`
			}
			if json.Unmarshal(line, &peek) == nil && peek.Op == "policy" {
				slots <- struct{}{}
				concurrent.Add(1)
				go func() {
					defer func() { <-slots; concurrent.Done() }()
					ch <- handleLine(line)
				}()
			} else {
				concurrent.Wait()
				ch <- handleLine(line)
			}
			answers <- ch
		}
		if readErr != nil {
			if readErr != io.EOF {
				fmt.Fprintln(os.Stderr, "quota-oracle: stdin:", readErr)
				os.Exit(1)
			}
			break
		}
	}
	close(answers)
	<-written
}

// silenceLogs keeps the libraries' logging (informers starting, policies refreshed) off
// stderr, unless KQ_ORACLE_LOG is set.
func silenceLogs() {
	if os.Getenv("KQ_ORACLE_LOG") != "" {
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

func strict(data []byte, into any) error {
	strictErrs, err := kjson.UnmarshalStrict(data, into, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// handleLine never panics: a bad line turns into an {"error": ...} answer.
func handleLine(line []byte) (answer any) {
	var req request
	defer func() {
		if r := recover(); r != nil {
			answer = errorAnswer{ID: req.ID, Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if err := strict(line, &req); err != nil {
		return errorAnswer{ID: req.ID, Error: "bad request: " + err.Error()}
	}
	var ans any
	var err error
	switch req.Op {
	case "usage":
		ans, err = usageOp(&req)
	case "admit":
		ans, err = admitOp(&req)
	case "limits":
		ans, err = limitsOp(&req)
	case "podsecurity":
		ans, err = podSecurityOp(&req)
	case "policy":
		ans, err = policyOp(&req)
	case "gates":
		g := gatesAnswer{ID: req.ID, Gates: map[string]bool{}}
		for _, f := range reportedGates {
			g.Gates[string(f)] = utilfeature.DefaultFeatureGate.Enabled(f)
		}
		ans = g
	case "":
		err = errors.New(`bad request: missing "op" (want "usage", "admit", "limits", "podsecurity", "policy" or "gates")`)
	default:
		err = fmt.Errorf(`bad request: unknown op %q (want "usage", "admit", "limits", "podsecurity", "policy" or "gates")`, req.Op)
	}
	if err != nil {
		return errorAnswer{ID: req.ID, Error: err.Error()}
	}
	return ans
}

// podSecurityOp is PodSecurity admission (k8s.io/pod-security-admission's Admission, with
// the checks of policy.DefaultChecks at the binary's version, podSecurityVersion) on a pod being created,
// after the pod strategy's PrepareForCreate and Validate, in a namespace with the given
// labels.
func podSecurityOp(req *request) (any, error) {
	d, err := decodeObject(req.Object, "")
	if err != nil {
		return nil, fmt.Errorf("bad object: %w", err)
	}
	pod, ok := d.obj.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf(`bad request: op "podsecurity" takes a Pod, not a %s`, d.gvk.Kind)
	}
	ns := req.Namespace
	if ns == "" {
		ns = "ns"
	}
	pod.Namespace = ns
	// As most clusters run (--allow-privileged=true), for this question only: privileged
	// containers are PodSecurity's to refuse. Every other op keeps the default (false).
	capabilities.ResetForTest()
	capabilities.Setup(true, 0)
	defer capabilities.ResetForTest()
	podregistry.Strategy.PrepareForCreate(requestContext(ns), pod)
	if errs := podregistry.Strategy.Validate(requestContext(ns), pod); len(errs) > 0 {
		return podSecurityAnswer{ID: req.ID, Invalid: errs.ToAggregate().Error()}, nil
	}
	v1pod := &corev1.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, v1pod, nil); err != nil {
		return nil, fmt.Errorf("converting the pod to v1: %w", err)
	}
	a, err := podSecurityAdmission(req.DefaultEnforce, req.DefaultEnforceVersion)
	if err != nil {
		return nil, err
	}
	getter := namespaceWithLabels{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: req.Labels}}}
	a.NamespaceGetter = getter
	attrs := &psapi.AttributesRecord{
		Name:      pod.Name,
		Namespace: ns,
		Kind:      corev1.SchemeGroupVersion.WithKind("Pod"),
		Resource:  corev1.SchemeGroupVersion.WithResource("pods"),
		Operation: admissionv1.Create,
		Object:    v1pod,
		Username:  "someone",
	}
	resp := a.Validate(context.Background(), attrs)
	ans := podSecurityAnswer{ID: req.ID, Allowed: resp.Allowed}
	if !resp.Allowed && resp.Result != nil {
		ans.Message = resp.Result.Message
		if _, after, found := strings.Cut(ans.Message, " is forbidden: "); found {
			ans.Message = after
		}
	}
	return ans, nil
}

type namespaceWithLabels struct{ ns *corev1.Namespace }

func (n namespaceWithLabels) GetNamespace(context.Context, string) (*corev1.Namespace, error) {
	return n.ns, nil
}

type noPods struct{}

func (noPods) ListPods(context.Context, string) ([]*corev1.Pod, error) { return nil, nil }

// podSecurityAdmission is the library's admission with the given defaults, nothing exempt.
func podSecurityAdmission(enforce, version string) (*psadmission.Admission, error) {
	if enforce == "" {
		enforce = "privileged"
	}
	if version == "" {
		version = "latest"
	}
	emulated := podSecurityVersion
	evaluator, err := pspolicy.NewEvaluator(pspolicy.DefaultChecks(), &emulated)
	if err != nil {
		return nil, err
	}
	cfg := &psadmissionapi.PodSecurityConfiguration{Defaults: psadmissionapi.PodSecurityDefaults{
		Enforce: enforce, EnforceVersion: version, Audit: "privileged", AuditVersion: "latest", Warn: "privileged", WarnVersion: "latest",
	}}
	a := &psadmission.Admission{Configuration: cfg, Evaluator: evaluator, Metrics: psmetrics.NewPrometheusRecorder(emulated), PodLister: noPods{}}
	if err := a.CompleteConfiguration(); err != nil {
		return nil, err
	}
	return a, nil
}

// limitsOp is the LimitRanger admission plugin on a pod or claim being created or updated,
// as the API server runs it: the plugin's Admit (each LimitRange's defaults), the pod
// strategy's PrepareForCreate and Validate (on update: prepareUpdate, as the admit op), then
// the plugin's Validate. Each LimitRange gets a plugin of its own, asked in the order given,
// the first refusal answering, as the plugin does over the LimitRanges it lists (in the
// order its informer's cache lists them, which a question cannot pin).
func limitsOp(req *request) (any, error) {
	if len(req.Object) == 0 {
		return nil, errors.New(`bad request: op "limits" needs "object"`)
	}
	d, err := decodeObject(req.Object, "")
	if err != nil {
		return nil, fmt.Errorf("bad object: %w", err)
	}
	switch d.obj.(type) {
	case *api.Pod, *api.PersistentVolumeClaim:
	default:
		return nil, fmt.Errorf(`bad request: op "limits" takes a Pod or a PersistentVolumeClaim, not a %s`, d.gvk.Kind)
	}
	ns := req.Namespace
	if ns == "" {
		ns = "ns"
	}
	acc, err := meta.Accessor(d.obj)
	if err != nil {
		return nil, err
	}
	acc.SetNamespace(ns)
	op, opts, od, err := operation(req, d, ns)
	if err != nil {
		return nil, err
	}
	var old runtime.Object
	if od != nil {
		old = od.obj
	}
	attrs := admission.NewAttributesRecord(d.obj, old, d.gvk, ns, acc.GetName(), d.gvr, req.Subresource, op, opts, false, nil)
	ans := limitsAnswer{ID: req.ID, Allowed: true}
	if !(&limitranger.DefaultLimitRangerActions{}).SupportsAttributes(attrs) {
		// The plugin returns at once (a pod update other than a resize, another subresource).
		ans.Ignored = true
	}
	plugins := make([]*limitranger.LimitRanger, len(req.LimitRanges))
	for i := range req.LimitRanges {
		lr := &req.LimitRanges[i]
		legacyscheme.Scheme.Default(lr)
		lr.Namespace = ns
		if plugins[i], err = limitRangerWith(lr); err != nil {
			return nil, err
		}
	}
	refusal := func(err error) string {
		msg := err.Error()
		if _, after, found := strings.Cut(msg, " is forbidden: "); found {
			return after
		}
		return msg
	}
	ctx := requestContext(ns)
	for _, p := range plugins {
		if err := p.Admit(ctx, attrs, nil); err != nil {
			ans.Allowed, ans.Message = false, refusal(err)
			return ans, nil
		}
	}
	var invalid field.ErrorList
	if pod, ok := d.obj.(*api.Pod); ok && od == nil {
		podregistry.Strategy.PrepareForCreate(ctx, pod)
		invalid = podregistry.Strategy.Validate(ctx, pod)
	} else if od != nil {
		invalid = prepareUpdate(d, od, ns, req.Subresource)
	}
	if agg := invalid.ToAggregate(); agg != nil {
		ans.Invalid = agg.Error()
		ans.Allowed = false
		return ans, nil
	}
	for _, p := range plugins {
		if err := p.Validate(ctx, attrs, nil); err != nil {
			ans.Allowed, ans.Message = false, refusal(err)
			return ans, nil
		}
	}
	return ans, nil
}

// limitRangeClient answers the plugin's live lookup, which it makes only when its lister
// finds no LimitRange (never here: each plugin's cache holds one).
var limitRangeClient = fake.NewSimpleClientset()

// limitRangerWith is upstream's LimitRanger plugin as a server initialises it (informer
// factory, clientset), its LimitRange cache holding lr alone.
func limitRangerWith(lr *corev1.LimitRange) (*limitranger.LimitRanger, error) {
	p, err := limitranger.NewLimitRanger(&limitranger.DefaultLimitRangerActions{})
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(limitRangeClient, 0)
	p.SetExternalKubeInformerFactory(factory)
	p.SetExternalKubeClientSet(limitRangeClient)
	if err := p.ValidateInitialization(); err != nil {
		return nil, err
	}
	if err := factory.Core().V1().LimitRanges().Informer().GetIndexer().Add(lr); err != nil {
		return nil, err
	}
	return p, nil
}

// decoded is an object as the API server hands it to admission: decoded from its
// versioned JSON, defaulted, converted to the internal version (kinds the scheme does
// not know stay unstructured).
type decoded struct {
	obj runtime.Object
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
}

func decodeObject(raw json.RawMessage, resourceOverride string) (*decoded, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, err
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return nil, errors.New("the object needs apiVersion and kind")
	}
	gvk := gv.WithKind(tm.Kind)
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	if resourceOverride != "" {
		gvr.Resource = resourceOverride
	}
	d := &decoded{gvk: gvk, gvr: gvr}
	external, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		d.obj = u
		return d, nil
	}
	if err := strict(raw, external); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(external)
	internal, err := legacyscheme.Scheme.ConvertToVersion(external, schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, fmt.Errorf("converting to the internal version: %w", err)
	}
	d.obj = internal
	return d, nil
}

// registries holds one quota registry per set of DeviceClasses (by their JSON).
var (
	registriesMu sync.Mutex
	registries   = map[string]quota.Registry{}
)

var claimsGR = resourcev1.SchemeGroupVersion.WithResource("resourceclaims").GroupResource()

// registryFor builds what the API server's quota admission builds at start-up:
// install.NewQuotaConfigurationForAdmission over informers, here of a fake clientset
// holding the DeviceClasses, and waits until the claim evaluator's DeviceClass cache
// has seen every class.
func registryFor(classes []resourcev1.DeviceClass) (quota.Registry, error) {
	keyBytes, _ := json.Marshal(classes)
	key := string(keyBytes)
	registriesMu.Lock()
	defer registriesMu.Unlock()
	if r, ok := registries[key]; ok {
		return r, nil
	}
	objs := make([]runtime.Object, len(classes))
	for i := range classes {
		objs[i] = classes[i].DeepCopy()
	}
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(objs...), 0)
	cfg, err := quotainstall.NewQuotaConfigurationForAdmission(factory, nil)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{}) // informers live as long as the process
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	reg := generic.NewRegistry(cfg.Evaluators())
	if ev := reg.Get(claimsGR); ev != nil {
		deadline := time.Now().Add(10 * time.Second)
		for !claimCacheHas(ev, classes) {
			if time.Now().After(deadline) {
				return nil, errors.New("the DeviceClass cache did not see every class within 10s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	registries[key] = reg
	return reg, nil
}

// claimCacheHas asks the claim evaluator whether it claims each class's implicit
// extended resource name (and its explicit one): it does once the class is cached.
func claimCacheHas(ev quota.Evaluator, classes []resourcev1.DeviceClass) bool {
	for _, c := range classes {
		names := []corev1.ResourceName{corev1.ResourceName(corev1.ResourceImplicitExtendedClaimsPerClass + c.Name)}
		if c.Spec.ExtendedResourceName != nil {
			names = append(names, corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+*c.Spec.ExtendedResourceName))
		}
		if len(ev.MatchingResources(names)) != len(names) {
			return false
		}
	}
	return true
}

// evaluatorFor is what the plugin's Evaluate does: ignored resources are not checked;
// resources without a registered evaluator get an object-count evaluator.
func evaluatorFor(reg quota.Registry, gr schema.GroupResource) quota.Evaluator {
	if _, ok := quotainstall.DefaultIgnoredResources()[gr]; ok {
		return nil
	}
	ev := reg.Get(gr)
	if ev == nil {
		ev = generic.NewObjectCountEvaluator(gr, nil, "")
		reg.Add(ev)
	}
	return ev
}

// Pods go through the registry strategy before validating admission (quota) sees
// them: PrepareForCreate (status reset to Pending, disabled fields dropped, pod-level
// resources defaulted, QoS class) on create; PrepareForUpdate of the pod or of its
// resize subresource (only resources taken from the new pod, status kept) on update.
// Other kinds are handed over as decoded and defaulted.

// asCreated is the object as a create through the API server stores it; a pod keeps the
// status it was given (what the kubelet would report later).
func asCreated(d *decoded, ns string) string {
	pod, ok := d.obj.(*api.Pod)
	if !ok {
		return ""
	}
	status := *pod.Status.DeepCopy()
	podregistry.Strategy.PrepareForCreate(requestContext(ns), pod)
	invalid := podregistry.Strategy.Validate(requestContext(ns), pod).ToAggregate()
	if status.QOSClass == "" {
		status.QOSClass = pod.Status.QOSClass
	}
	if !isZeroPodStatus(status) {
		pod.Status = status
	}
	if invalid != nil {
		return invalid.Error()
	}
	return ""
}

func isZeroPodStatus(s api.PodStatus) bool {
	return s.Phase == "" && len(s.ContainerStatuses) == 0 && len(s.InitContainerStatuses) == 0 && len(s.Conditions) == 0
}

// operation reads a request's operation: a create (no oldObject, no subresource), or an
// update of the stored object it decodes from oldObject.
func operation(req *request, d *decoded, ns string) (admission.Operation, runtime.Object, *decoded, error) {
	switch req.Operation {
	case "", "create":
		if len(req.OldObject) != 0 {
			return "", nil, nil, errors.New(`bad request: "oldObject" is only for "operation":"update"`)
		}
		if req.Subresource != "" {
			return "", nil, nil, errors.New(`bad request: "subresource" is only for "operation":"update"`)
		}
		return admission.Create, &metav1.CreateOptions{}, nil, nil
	case "update":
		if len(req.OldObject) == 0 {
			return "", nil, nil, errors.New(`bad request: "operation":"update" needs "oldObject"`)
		}
		od, err := decodeStored(req, d, ns)
		if err != nil {
			return "", nil, nil, err
		}
		return admission.Update, &metav1.UpdateOptions{}, od, nil
	default:
		return "", nil, nil, fmt.Errorf(`bad request: unknown operation %q (want "create" or "update")`, req.Operation)
	}
}

// decodeStored decodes an update's oldObject (the stored object), of the same kind as the
// object, in the namespace ns.
func decodeStored(req *request, d *decoded, ns string) (*decoded, error) {
	od, err := decodeObject(req.OldObject, req.Resource)
	if err != nil {
		return nil, fmt.Errorf("bad oldObject: %w", err)
	}
	if od.gvk != d.gvk {
		return nil, fmt.Errorf("bad request: oldObject is a %s, object a %s", od.gvk, d.gvk)
	}
	if oacc, err := meta.Accessor(od.obj); err == nil {
		oacc.SetNamespace(ns)
	}
	return od, nil
}

// prepareUpdate is what the API server does to an update before validating admission: the
// stored object is taken as created (asCreated), and a pod goes through the strategy's
// PrepareForUpdate and ValidateUpdate, or the resize strategy's for subresource "resize".
// The answer is the update's validation errors, the stored pod's under "oldObject".
func prepareUpdate(d, od *decoded, ns, subresource string) field.ErrorList {
	var invalid field.ErrorList
	oldInvalid := asCreated(od, ns)
	if pod, ok := d.obj.(*api.Pod); ok {
		switch subresource {
		case "":
			podregistry.Strategy.PrepareForUpdate(requestContext(ns), pod, od.obj)
			invalid = podregistry.Strategy.ValidateUpdate(requestContext(ns), pod, od.obj)
		case "resize":
			podregistry.ResizeStrategy.PrepareForUpdate(requestContext(ns), pod, od.obj)
			invalid = podregistry.ResizeStrategy.ValidateUpdate(requestContext(ns), pod, od.obj)
		}
	}
	if oldInvalid != "" {
		invalid = append(invalid, field.Invalid(field.NewPath("oldObject"), "", oldInvalid))
	}
	return invalid
}

func requestContext(ns string) context.Context {
	return genericapirequest.WithNamespace(context.Background(), ns)
}

func usageOp(req *request) (any, error) {
	if len(req.Object) == 0 {
		return nil, errors.New(`bad request: op "usage" needs "object"`)
	}
	d, err := decodeObject(req.Object, req.Resource)
	if err != nil {
		return nil, fmt.Errorf("bad object: %w", err)
	}
	invalid := ""
	if acc, err := meta.Accessor(d.obj); err == nil {
		// As the API server fills it in from the request's path.
		if acc.GetNamespace() == "" {
			acc.SetNamespace(metav1.NamespaceDefault)
		}
		invalid = asCreated(d, acc.GetNamespace())
	}
	reg, err := registryFor(req.DeviceClasses)
	if err != nil {
		return nil, err
	}
	ev := evaluatorFor(reg, d.gvr.GroupResource())
	if ev == nil {
		return usageAnswer{ID: req.ID, Invalid: invalid, Ignored: true, Usage: map[string]string{}}, nil
	}
	u, err := ev.Usage(d.obj)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return usageAnswer{ID: req.ID, Invalid: invalid, Usage: quantities(u)}, nil
}

func admitOp(req *request) (any, error) {
	if len(req.Object) == 0 {
		return nil, errors.New(`bad request: op "admit" needs "object"`)
	}
	d, err := decodeObject(req.Object, req.Resource)
	if err != nil {
		return nil, fmt.Errorf("bad object: %w", err)
	}
	acc, err := meta.Accessor(d.obj)
	if err != nil {
		return nil, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = acc.GetNamespace()
	}
	if ns == "" {
		return nil, errors.New(`bad request: op "admit" needs "namespace" (or metadata.namespace)`)
	}
	// As the API server fills it in from the request's path.
	acc.SetNamespace(ns)
	var old runtime.Object
	var invalid field.ErrorList
	op, opts, od, err := operation(req, d, ns)
	if err != nil {
		return nil, err
	}
	switch od {
	case nil:
		if pod, ok := d.obj.(*api.Pod); ok {
			podregistry.Strategy.PrepareForCreate(requestContext(ns), pod)
			invalid = podregistry.Strategy.Validate(requestContext(ns), pod)
		}
	default:
		invalid = prepareUpdate(d, od, ns, req.Subresource)
		old = od.obj
	}
	for i := range req.Quotas {
		// Quotas live in the namespace they govern; fill it in when the caller left it out.
		if req.Quotas[i].Namespace == "" {
			req.Quotas[i].Namespace = ns
		}
	}
	limited := make([]resourcequotaapi.LimitedResource, len(req.LimitedResources))
	for i, l := range req.LimitedResources {
		limited[i] = resourcequotaapi.LimitedResource{APIGroup: l.APIGroup, Resource: l.Resource, MatchContains: l.MatchContains, MatchScopes: l.MatchScopes}
	}
	reg, err := registryFor(req.DeviceClasses)
	if err != nil {
		return nil, err
	}
	ans := admitAnswer{ID: req.ID, Quotas: []map[string]string{}}
	if agg := invalid.ToAggregate(); agg != nil {
		ans.Invalid = agg.Error()
	}
	ev := evaluatorFor(reg, d.gvr.GroupResource())
	if ev == nil {
		ans.Ignored, ans.Allowed = true, true
		for i := range req.Quotas {
			ans.Quotas = append(ans.Quotas, quantities(req.Quotas[i].Status.Used))
		}
		return ans, nil
	}
	attrs := admission.NewAttributesRecord(d.obj, old, d.gvk, ns, acc.GetName(), d.gvr, req.Subresource, op, opts, false, nil)
	ans.Handled = ev.Handles(attrs)
	updated, err := quotaplugin.CheckRequest(req.Quotas, attrs, ev, limited)
	ans.Allowed = err == nil
	if err != nil {
		// Some refusals return the quotas unchanged, others none: say nothing either way.
		ans.Message = err.Error()
		updated = nil
	}
	for i := range updated {
		ans.Quotas = append(ans.Quotas, quantities(updated[i].Status.Used))
	}
	return ans, nil
}

func quantities(list corev1.ResourceList) map[string]string {
	m := make(map[string]string, len(list))
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		q := list[corev1.ResourceName(name)]
		m[name] = q.String()
	}
	return m
}
