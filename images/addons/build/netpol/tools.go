//go:build tools

// Package netpol pins the kube-network-policies agent that the
// networkPolicy add-on image runs to enforce NetworkPolicy on kind nodes.
package netpol

import (
	_ "sigs.k8s.io/kube-network-policies/cmd"
)
