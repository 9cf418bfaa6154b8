//go:build tools

// Package helm pins the helm command the sandbox ships.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
