//go:build tools

package labctl

import (
	_ "github.com/creack/pty"
	_ "github.com/docker/docker/client"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
	_ "gopkg.in/yaml.v3"
	_ "k8s.io/client-go/dynamic"
	_ "sigs.k8s.io/kind/pkg/cluster"
)
