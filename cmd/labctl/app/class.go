package app

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/provision/class"
	"github.com/labctl/labctl/usecase/classroom"
)

// The class commands run one lab per learner on an existing Kubernetes
// cluster (provision/class's Class): up, status, grade, shell, reset, down and
// invite; cluster makes a kind class cluster on this machine to try one on.

// classFlags are the class commands' persistent flags and their keys in
// the configuration: --context is class.context, which LABCTL_CLASS_CONTEXT
// and the config file's class: context: set too.
var classFlags = []struct{ flag, usage string }{
	{"context", "the kubeconfig `CONTEXT` of the class cluster (default: the kubeconfig's current context)"},
	{"kubeconfig", "the kubeconfig `FILE` of the class cluster (default: $KUBECONFIG, then ~/.kube/config)"},
	{"prefix", "the `PREFIX` of each learner's namespace"},
	{"storage-class", "the StorageClass `NAME` of the learners' volumes (default: the cluster's default)"},
	{"sandbox-image", "the sandbox `IMAGE` the cluster's nodes pull (default: the image labctl builds)"},
	{"node-image", "the node `IMAGE` of learner nodes, as the cluster's nodes pull it (default: the image labctl builds)"},
	{"node-selector", "keep the learners' Pods on nodes with these labels: `KEY=VALUE`, comma-separated"},
	{"toleration", "let the learners' Pods onto nodes with these taints: `KEY[=VALUE]:EFFECT`, comma-separated"},
}

func newClassCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "class",
		Short: "Run one lab per learner on an existing Kubernetes cluster",
		Long: "A class runs the lab (--lab) once per learner on an existing Kubernetes cluster: each learner gets a\n" +
			"namespace (PREFIX + name) holding a virtual control plane and a sandbox. What exists is read from the\n" +
			"cluster itself. The instructor grades every learner at once; a learner reaches their sandbox with the\n" +
			"file `labctl class invite` writes. docs/cli.md describes each command.",
		Example: "  labctl class up --learners 20\n  labctl class status\n  labctl class grade -o junit --output-file class.xml",
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := loadConfig(g.cfg, cmd); err != nil {
				return err
			}
			return bindClassConfig(g, cmd)
		},
	}
	fl := cmd.PersistentFlags()
	for _, f := range classFlags {
		def := ""
		if f.flag == "prefix" {
			def = class.DefaultPrefix
		}
		fl.String(f.flag, def, f.usage)
	}
	_ = cmd.MarkPersistentFlagFilename("kubeconfig")
	cmd.AddCommand(
		newClassUpCommand(g),
		newClassStatusCommand(g),
		newClassGradeCommand(g),
		newClassShellCommand(g),
		newClassResetCommand(g),
		newClassDownCommand(g),
		newClassInviteCommand(g),
		newClassClusterCommand(g),
	)
	return cmd
}

// bindClassConfig binds each class flag to its key class.FLAG and to the
// environment variable LABCTL_CLASS_FLAG (dashes as underscores).
func bindClassConfig(g *globals, cmd *cobra.Command) error {
	for _, f := range classFlags {
		key := "class." + f.flag
		if err := g.cfg.BindPFlag(key, cmd.Flags().Lookup(f.flag)); err != nil {
			return err
		}
		env := "LABCTL_CLASS_" + strings.ToUpper(strings.ReplaceAll(f.flag, "-", "_"))
		if err := g.cfg.BindEnv(key, env); err != nil {
			return err
		}
	}
	return nil
}

// classSession is a class the command opened: the lab, its state and the
// class on its cluster.
type classSession struct {
	st    *labState
	class classCluster
	// room is the class's work on its learners.
	room *classroom.Session[liveLab]
	// prefix is the learners' namespace prefix.
	prefix string
}

// classPrefix is the configured namespace prefix.
func (g *globals) classPrefix() string { return class.PrefixOr(g.cfg.GetString("class.prefix")) }

// openClass loads the lab and connects to the class cluster; close it.
func (g *globals) openClass(ctx context.Context) (*classSession, error) {
	st, err := g.loadLabState()
	if err != nil {
		return nil, err
	}
	return g.openClassOf(ctx, st)
}

// openClassOf connects to the class cluster of the lab st.
func (g *globals) openClassOf(ctx context.Context, st *labState) (*classSession, error) {
	return g.openClassWith(ctx, st, class.NeedsNodes(st.lab), class.NodeLabel{})
}

// openClassWith is openClassOf for a caller that has class.NeedsNodes of
// st's lab already: learnerNodes; nodeAccessOn is class up's consent to
// node access (the zero value: what the class's learners were brought up
// with).
func (g *globals) openClassWith(ctx context.Context, st *labState, learnerNodes bool, nodeAccessOn class.NodeLabel) (*classSession, error) {
	prefix := g.classPrefix()
	placement, err := class.ParsePlacement(g.cfg.GetString("class.node-selector"), g.cfg.GetString("class.toleration"))
	if err != nil {
		return nil, &ExitError{Code: exitError, Err: err}
	}
	c, err := g.env.OpenClass(ctx, class.Config{
		Lab:           st.lab,
		Fixtures:      st.fixtures,
		Kubeconfig:    g.cfg.GetString("class.kubeconfig"),
		Context:       g.cfg.GetString("class.context"),
		Prefix:        prefix,
		StorageClass:  g.cfg.GetString("class.storage-class"),
		SandboxImage:  g.cfg.GetString("class.sandbox-image"),
		CheckerBinary: g.cfg.GetString("checker-binary"),
		LearnerNodes:  learnerNodes,
		NodeImage:     g.cfg.GetString("class.node-image"),
		Images:        class.LabImages(st.lab),
		Placement:     placement,
		NodeAccessOn:  nodeAccessOn,
		Log:           g.detail(),
	})
	if err != nil {
		return nil, err
	}
	cs := &classSession{st: st, class: c, prefix: prefix}
	cs.room = &classroom.Session[liveLab]{Class: c, Prefix: prefix, Lab: st.lab, Digest: st.digest, Catalog: st.catalog,
		Store: cs.learnerStore}
	return cs, nil
}

func (s *classSession) Close() { s.class.Close() }

// learnerStore is a learner's progress store, in class.StateDir,
// where the grader's audit windows read the progress too.
func (s *classSession) learnerStore(learner string) (*progress.Store, error) {
	dir, err := class.StateDir(s.st.lab.Metadata.Name, learner)
	if err != nil {
		return nil, err
	}
	return progress.NewStore(dir), nil
}

// learnerState is the lab's state as one learner's: their progress and
// the backups of their /root (learnerStore).
func (s *classSession) learnerState(learner string) (*labState, error) {
	store, err := s.learnerStore(learner)
	if err != nil {
		return nil, err
	}
	st := *s.st
	st.store = store
	st.situation = grading.InClass(learner)
	return &st, nil
}

// learnerArg checks a LEARNER argument before anything is touched.
func learnerArg(g *globals, name string) error {
	if err := class.ValidLearnerName(g.classPrefix(), name); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	return nil
}

// classCommandLine is `labctl [--lab LAB] class` as the user would type it
// again, for messages.
func classCommandLine(g *globals) string {
	s := "labctl"
	if lab := g.labPath(); lab != "" {
		s += " --lab " + lab
	}
	return s + " class"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
