//go:build tools

// Package coredns pins the CoreDNS command the node image's coredns image
// runs, at the version kubeadm expects.
package coredns

import (
	_ "github.com/coredns/coredns"
)
