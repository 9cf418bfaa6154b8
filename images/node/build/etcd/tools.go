//go:build tools

// Package etcd pins the etcd server command the node image's etcd image
// runs, at the version kubeadm expects, and the etcdctl and etcdutl
// commands the image ships beside it, at the same version.
package etcd

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
)
