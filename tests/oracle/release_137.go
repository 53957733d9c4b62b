//go:build !k138

// The parts of the oracle that differ between the releases it is built against: this file
// for Kubernetes 1.37 (go.mod, the default build), release_138.go for 1.38 (go.1.38.mod,
// build tag k138). build.sh picks the pair.
package main

import (
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
	psapi "k8s.io/pod-security-admission/api"
)

// release is the Kubernetes minor release of the modules go.mod pins.
const release = "1.37"

// podSecurityVersion is the version PodSecurity's checks are evaluated at: the binary's.
var podSecurityVersion = psapi.MajorMinorVersion(1, 37)

// releaseGates are the reported gates that only this release has: 1.38 removed them, each
// locked to the value its code now hard-wires.
var releaseGates = []featuregate.Feature{
	features.DynamicResourceAllocation,
	features.InPlacePodVerticalScaling,
	features.RecoverVolumeExpansionFailure,
}
