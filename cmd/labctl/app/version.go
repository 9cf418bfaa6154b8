package app

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/images"
)

// Version and Commit are stamped at build time with
// -ldflags "-X .../app.Version=... -X .../app.Commit=..." (the Makefile
// does); an unstamped build takes the commit from Go's build information.
var (
	Version = "dev"
	Commit  = ""
)

// versionInfo is `labctl version -o json`; its field names are stable
// (docs/cli.md).
type versionInfo struct {
	Version      string `json:"version"`
	Commit       string `json:"commit"`
	Go           string `json:"go"`
	Kubernetes   string `json:"kubernetes"`
	Helm         string `json:"helm"`
	Yq           string `json:"yq"`
	NodeImage    string `json:"nodeImage"`
	SandboxImage string `json:"sandboxImage"`
}

func currentVersion() versionInfo {
	return versionInfo{
		Version:      Version,
		Commit:       commit(Commit, debug.ReadBuildInfo),
		Go:           runtime.Version(),
		Kubernetes:   images.KubernetesVersion,
		Helm:         images.HelmVersion,
		Yq:           images.YqVersion,
		NodeImage:    images.NodeRef(),
		SandboxImage: images.SandboxRef(),
	}
}

// commit is the stamped commit, else the one Go recorded at build time
// (with "-dirty" for a modified tree), else "unknown".
func commit(stamped string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "" {
		return stamped
	}
	info, ok := buildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case dirty:
		return rev + "-dirty"
	}
	return rev
}

// writeVersion prints labctl's version: its first line is "labctl VERSION".
func writeVersion(w io.Writer, format string) error {
	v := currentVersion()
	if format == jsonFormat {
		return writeJSON(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "labctl %s\n", v.Version)
	fmt.Fprintf(tw, "commit:\t%s\n", v.Commit)
	fmt.Fprintf(tw, "go:\t%s\n", v.Go)
	fmt.Fprintf(tw, "kubernetes:\t%s\n", v.Kubernetes)
	fmt.Fprintf(tw, "helm:\t%s\n", v.Helm)
	fmt.Fprintf(tw, "yq:\t%s\n", v.Yq)
	fmt.Fprintf(tw, "node image:\t%s\n", v.NodeImage)
	fmt.Fprintf(tw, "sandbox image:\t%s\n", v.SandboxImage)
	return tw.Flush()
}

func newVersionCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print labctl's version, commit, Go, Kubernetes, helm and yq versions and image tags",
		Example: "  labctl version\n  labctl version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(g.streams.Out, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}
