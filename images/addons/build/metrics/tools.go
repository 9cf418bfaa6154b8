//go:build tools

// Package metrics pins the metrics-server command the metrics add-on runs:
// it reads each kubelet's resource metrics and serves them as the
// metrics.k8s.io API (kubectl top, HorizontalPodAutoscalers).
package metrics

import (
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
