//go:build tools

// Package yq pins the yq command the sandbox ships.
package yq

import (
	_ "github.com/mikefarah/yq/v4"
)
