//go:build tools

// Package localpath pins the local-path-provisioner command the storage
// add-on runs: it turns PersistentVolumeClaims into directories on the node.
package localpath

import (
	_ "github.com/rancher/local-path-provisioner"
)
