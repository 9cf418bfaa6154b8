package app

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// completionLab is the lab the command line names, or nil when it does
// not load (a completion says nothing then).
func (g *globals) completionLab(cmd *cobra.Command) *lab.Lab {
	if err := loadConfig(g.cfg, cmd); err != nil {
		return nil
	}
	l, _, _, _, err := g.loadLab()
	if err != nil {
		return nil
	}
	return l
}

// stepIDs lists the step ids of the lab the command line names, with their
// titles, for shell completion; nothing when the lab does not load.
func (g *globals) stepIDs(cmd *cobra.Command, prefix string) []cobra.Completion {
	l := g.completionLab(cmd)
	if l == nil {
		return nil
	}
	var ids []cobra.Completion
	for _, s := range l.Steps {
		if !strings.HasPrefix(s.ID, prefix) {
			continue
		}
		if s.Title != "" {
			ids = append(ids, cobra.CompletionWithDesc(s.ID, textsafe.EscapeLine(s.Title)))
		} else {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// completeStep completes a flag whose value is a step id (--step, --to).
func completeStep(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return g.stepIDs(cmd, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeAnswer completes --only: the names of the mistakes and
// alternatives of the step that --step names.
func completeAnswer(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		step, _ := cmd.Flags().GetString("step")
		l := g.completionLab(cmd)
		if step == "" || l == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := progress.Step(l, step)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, m := range s.Mistakes {
			if strings.HasPrefix(m.Name, prefix) {
				names = append(names, cobra.CompletionWithDesc(m.Name, textsafe.EscapeLine("mistake: "+m.Description)))
			}
		}
		for _, a := range s.Alternatives {
			if strings.HasPrefix(a.Name, prefix) {
				names = append(names, cobra.CompletionWithDesc(a.Name, textsafe.EscapeLine("alternative: "+a.Description)))
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeStepArg completes a command's one STEP argument.
func completeStepArg(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return g.stepIDs(cmd, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}
