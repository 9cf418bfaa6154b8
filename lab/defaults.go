package lab

import (
	"slices"
	"time"
)

// Defaults written into a lab by Default.
const (
	DefaultProvider     = "kind"
	DefaultWorkDir      = "/root"
	DefaultFixturesDir  = "/opt/lab/fixtures"
	DefaultLanguage     = "en"
	DefaultCheckTimeout = 10 * time.Second
	DefaultReachTimeout = 90 * time.Second
	DefaultProbeTimeout = 60 * time.Second
	DefaultPoints       = 1
	DefaultMessageWhich = "last"
	DefaultCommandDir   = "/"
	DefaultPodSecurity  = PodSecurityBaseline
	DefaultWorkloads    = WorkloadsRun
)

// MaxWaitTimeout bounds the timeout of a kube check with wait: it reads
// again until its timeout when what it waits for never comes, and the
// round, the learner's check and a class's grade wait with it.
const MaxWaitTimeout = 10 * time.Minute

// Pod Security Standards a lab can enforce in its namespaces.
const (
	PodSecurityBaseline   = "baseline"
	PodSecurityRestricted = "restricted"
	PodSecurityPrivileged = "privileged"
)

// What a lab needs of its Pods (Cluster.Workloads).
const (
	// WorkloadsRun: the lab's Pods must run.
	WorkloadsRun = "run"
	// WorkloadsDeclare: the lab's checks only read what the API server stores.
	WorkloadsDeclare = "declare"
)

// Default fills in every field left unset that has a default, so code using
// a Lab never has to: the cluster provider, Pod Security level and workloads, the
// sandbox's directories, the language, each check's timeout and points,
// each probe's timeout, exists: true on file, git, kube and field checks,
// message.which, and a command's exit code and directory. Parse and Load call it; call it on a
// Lab built in Go before Validate.
func (l *Lab) Default() {
	setString(&l.Cluster.Provider, DefaultProvider)
	setString(&l.Cluster.PodSecurity, DefaultPodSecurity)
	setString(&l.Cluster.Workloads, DefaultWorkloads)
	setString(&l.Sandbox.WorkDir, DefaultWorkDir)
	setString(&l.Sandbox.Fixtures, DefaultFixturesDir)
	if len(l.Cluster.Namespaces) > 0 {
		setString(&l.Sandbox.Namespace, l.Cluster.Namespaces[0])
	}
	setString(&l.Metadata.Language, DefaultLanguage)
	for i := range l.Steps {
		l.Steps[i].EveryCheck((*Check).Default)
		l.Steps[i].EveryCheck(func(c *Check) {
			if c.Permissions != nil && len(c.Permissions.Namespaces) == 0 {
				c.Permissions.Namespaces = slices.Clone(l.Cluster.Namespaces)
			}
		})
		if p := l.Steps[i].Probe; p != nil && p.Timeout.Duration == 0 {
			p.Timeout.Duration = DefaultProbeTimeout
		}
	}
}

// Default fills in a check's unset fields (see Lab.Default).
func (c *Check) Default() {
	if c.Timeout.Duration == 0 {
		c.Timeout.Duration = DefaultCheckTimeout
		if c.Reach != nil || c.Matrix != nil {
			// A reach check starts a Pod before it connects.
			c.Timeout.Duration = DefaultReachTimeout
		}
		if c.Permissions != nil {
			c.Timeout.Duration = DefaultPermissionsTimeout
		}
	}
	if c.Points == 0 {
		c.Points = DefaultPoints
	}
	if f := c.File; f != nil {
		setTrue(&f.Exists)
		if f.Field != nil {
			setTrue(&f.Field.Exists)
		}
	}
	if g := c.Git; g != nil {
		setTrue(&g.Exists)
		if g.Message != nil {
			setString(&g.Message.Which, DefaultMessageWhich)
		}
		if g.Field != nil {
			setTrue(&g.Field.Exists)
		}
	}
	if k := c.Kube; k != nil {
		if k.Selector == nil {
			setTrue(&k.Exists)
		}
		if k.Field != nil {
			setTrue(&k.Field.Exists)
		}
	}
	if a := c.Audit; a != nil && a.Request != nil {
		setTrue(&a.Request.Exists)
	}
	if cmd := c.Command; cmd != nil {
		if cmd.ExitCode == nil {
			zero := 0
			cmd.ExitCode = &zero
		}
		setString(&cmd.Dir, DefaultCommandDir)
	}
}

func setString(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

func setTrue(b **bool) {
	if *b == nil {
		t := true
		*b = &t
	}
}
