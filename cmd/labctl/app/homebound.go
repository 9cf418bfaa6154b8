package app

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/homebound"
)

// newHomeboundCommand is the warden a class runs beside each learner's
// control plane: it measures the learner's /root and stops their sandbox
// past its bound, with the in-cluster identity of the class cluster that
// may only read and evict that one Pod.
func newHomeboundCommand(g *globals) *cobra.Command {
	var w homebound.Warden
	var namespace, pod string
	cmd := &cobra.Command{
		Use:    "__homebound",
		Short:  "Bound a class learner's /root (run by labctl beside the learner's control plane)",
		Hidden: true,
		Args:   cobra.NoArgs,
		// Like the checker, it reads no configuration of labctl's.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := rest.InClusterConfig()
			if err != nil {
				return fmt.Errorf("reading the class cluster's in-cluster identity: %w", err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			w.Sandbox = homebound.PodSandbox{Client: cs, Namespace: namespace, Pod: pod, Component: "labctl-homebound"}
			w.Log = g.streams.Err
			return w.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&w.Dir, "dir", "/root", "the home to measure")
	f.Int64Var(&w.Limit.Bytes, "bytes", 2<<30, "the bytes the home may hold on its disk")
	f.Int64Var(&w.Limit.Entries, "entries", 500000, "the names the home may hold")
	f.Int64Var(&w.Limit.Depth, "depth", 4096, "how many directories deep a name of the home may be")
	f.DurationVar(&w.Every, "every", 5*time.Second, "the least time between two looks")
	f.DurationVar(&w.Poll, "poll", 0, "how often to ask, between looks, how much of the home's file system is used (0: never)")
	f.StringVar(&namespace, "namespace", "", "the sandbox Pod's namespace")
	f.StringVar(&pod, "pod", "sandbox", "the sandbox Pod's name")
	return cmd
}
