//go:build tools

// Package etcd pins the etcd server command the node image's etcd image
// runs, at the version kubeadm expects.
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
