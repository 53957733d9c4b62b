//go:build k138

// Kubernetes 1.38 (go.1.38.mod): see release_137.go.
package main

import (
	"k8s.io/component-base/featuregate"
	psapi "k8s.io/pod-security-admission/api"
)

// release is the Kubernetes minor release of the modules go.1.38.mod pins.
const release = "1.38"

// podSecurityVersion is the version PodSecurity's checks are evaluated at: the binary's.
var podSecurityVersion = psapi.MajorMinorVersion(1, 38)

// releaseGates: DynamicResourceAllocation, InPlacePodVerticalScaling and
// RecoverVolumeExpansionFailure, reported for 1.37, are gone in 1.38 (their code is always on).
var releaseGates = []featuregate.Feature{}
