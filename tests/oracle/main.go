// quota-oracle answers questions about Kubernetes quota arithmetic by calling
// the upstream Kubernetes libraries (v0.36.x) directly, so that kubectl-quota's
// own implementation can be compared with them.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on
// stdout (flushed after each). See README.md in this directory.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quotaplugin "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	kjson "sigs.k8s.io/json"
)

// request is the union of all operations' fields.
type request struct {
	Op string `json:"op"`
	// ID, if given, is echoed back unchanged so callers can pair answers with questions.
	ID json.RawMessage `json:"id,omitempty"`

	// op "pod"
	Pod               *corev1.Pod `json:"pod,omitempty"`
	PodLevelResources bool        `json:"podLevelResources,omitempty"`

	// op "check"
	Quotas    []corev1.ResourceQuota `json:"quotas,omitempty"`
	Usage     corev1.ResourceList    `json:"usage,omitempty"`
	Namespace string                 `json:"namespace,omitempty"`
	// Name and GenerateName of the pod being created; they only show up in the
	// refusal text (`pods "<name>" is forbidden: ...`). Upstream says "Unknown"
	// when both are empty.
	Name         string `json:"name,omitempty"`
	GenerateName string `json:"generateName,omitempty"`
	// MatchingResources, if given, is the set of resource names our evaluator
	// claims to handle (MatchingResources returns the quota's names that are in
	// it). If absent, the evaluator claims exactly the names present in Usage.
	MatchingResources *[]corev1.ResourceName `json:"matchingResources,omitempty"`
}

type podAnswer struct {
	ID       json.RawMessage   `json:"id,omitempty"`
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

type checkAnswer struct {
	ID      json.RawMessage     `json:"id,omitempty"`
	Allowed bool                `json:"allowed"`
	Message string              `json:"message"`
	Quotas  []map[string]string `json:"quotas"`
}

type errorAnswer struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			answer := handleLine(line)
			b, err := json.Marshal(answer)
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
		if readErr != nil {
			if readErr != io.EOF {
				fmt.Fprintln(os.Stderr, "quota-oracle: stdin:", readErr)
				os.Exit(1)
			}
			return
		}
	}
}

// handleLine never panics: a bad line turns into an {"error": ...} answer.
func handleLine(line []byte) (answer any) {
	var req request
	defer func() {
		if r := recover(); r != nil {
			answer = errorAnswer{ID: req.ID, Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	strictErrs, err := kjson.UnmarshalStrict(line, &req, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return errorAnswer{ID: req.ID, Error: "bad request: " + err.Error()}
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return errorAnswer{ID: req.ID, Error: "bad request: " + strings.Join(msgs, "; ")}
	}
	switch req.Op {
	case "pod":
		return podOp(&req)
	case "check":
		return checkOp(&req)
	case "":
		return errorAnswer{ID: req.ID, Error: `bad request: missing "op" (want "pod" or "check")`}
	default:
		return errorAnswer{ID: req.ID, Error: fmt.Sprintf("bad request: unknown op %q (want \"pod\" or \"check\")", req.Op)}
	}
}

func podOp(req *request) any {
	if req.Pod == nil {
		return errorAnswer{ID: req.ID, Error: `bad request: op "pod" needs "pod"`}
	}
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources:    false,
		SkipPodLevelResources: !req.PodLevelResources,
	}
	return podAnswer{
		ID:       req.ID,
		Requests: quantities(resourcehelper.PodRequests(req.Pod, opts)),
		Limits:   quantities(resourcehelper.PodLimits(req.Pod, opts)),
	}
}

func checkOp(req *request) any {
	if req.Namespace == "" {
		return errorAnswer{ID: req.ID, Error: `bad request: op "check" needs "namespace"`}
	}
	for i := range req.Quotas {
		// Quotas live in the namespace they govern; fill it in when the caller left it out.
		if req.Quotas[i].Namespace == "" {
			req.Quotas[i].Namespace = req.Namespace
		}
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: req.Name, GenerateName: req.GenerateName, Namespace: req.Namespace},
	}
	attrs := admission.NewAttributesRecord(
		pod, nil,
		corev1.SchemeGroupVersion.WithKind("Pod"),
		req.Namespace, req.Name,
		corev1.SchemeGroupVersion.WithResource("pods"),
		"", admission.Create, &metav1.CreateOptions{}, false, nil,
	)
	ev := &fixedUsageEvaluator{usage: req.Usage}
	if req.MatchingResources != nil {
		ev.matching = *req.MatchingResources
	} else {
		ev.matching = quota.ResourceNames(req.Usage)
	}
	updated, err := quotaplugin.CheckRequest(req.Quotas, attrs, ev, nil)
	ans := checkAnswer{ID: req.ID, Allowed: err == nil, Quotas: []map[string]string{}}
	if err != nil {
		ans.Message = err.Error()
	}
	for i := range updated {
		ans.Quotas = append(ans.Quotas, quantities(updated[i].Status.Used))
	}
	return ans
}

func quantities(list corev1.ResourceList) map[string]string {
	m := make(map[string]string, len(list))
	for name, q := range list {
		m[string(name)] = q.String()
	}
	return m
}

// fixedUsageEvaluator is the smallest quota.Evaluator that lets CheckRequest run
// its own arithmetic and wording: the object's usage is whatever the caller said.
type fixedUsageEvaluator struct {
	usage    corev1.ResourceList
	matching []corev1.ResourceName
}

var _ quota.Evaluator = &fixedUsageEvaluator{}

func (e *fixedUsageEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (e *fixedUsageEvaluator) GroupResource() schema.GroupResource {
	return corev1.SchemeGroupVersion.WithResource("pods").GroupResource()
}

func (e *fixedUsageEvaluator) Handles(admission.Attributes) bool { return true }

func (e *fixedUsageEvaluator) Matches(*corev1.ResourceQuota, runtime.Object) (bool, error) {
	return true, nil
}

func (e *fixedUsageEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (e *fixedUsageEvaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (e *fixedUsageEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, e.matching)
}

func (e *fixedUsageEvaluator) Usage(runtime.Object) (corev1.ResourceList, error) {
	out := make(corev1.ResourceList, len(e.usage))
	for name, q := range e.usage {
		out[name] = q.DeepCopy()
	}
	return out, nil
}

func (e *fixedUsageEvaluator) UsageStats(quota.UsageStatsOptions) (quota.UsageStats, error) {
	return quota.UsageStats{}, errors.New("quota-oracle: UsageStats is not supported")
}
