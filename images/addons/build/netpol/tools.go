//go:build tools

// Package netpol pins kube-router, whose firewall alone (no routing, no
// service proxy) enforces NetworkPolicy with iptables and ipset on every
// node of a lab that asks for the networkPolicy add-on.
package netpol

import (
	_ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
)
