package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// upTimeout bounds how long `labctl labs` asks Docker whether the labs are
// up: the listing stays quick, and says "?" when Docker is slow.
const upTimeout = 3 * time.Second

func newLabsCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "labs",
		Short: "List the built-in lab and the installed labs, with your progress in each and whether it is up",
		Long: "labs lists the lab built into labctl and the labs installed with `labctl install`: name, language,\n" +
			"version, your progress (steps passed of all steps), whether it is up, where it came from and its title.\n" +
			"Use one with `labctl --lab NAME ...`. UP is ? when Docker did not answer within a few seconds.",
		Example: "  labctl labs\n  labctl labs -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLabs(cmd.Context(), g, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

// labList is `labctl labs -o json`; its field names are stable
// (docs/cli.md).
type labList struct {
	// Dir is the labs directory.
	Dir  string     `json:"dir"`
	Labs []labEntry `json:"labs"`
}

type labEntry struct {
	Name     string `json:"name"`
	Title    string `json:"title"`
	Language string `json:"language"`
	Version  string `json:"version"`
	Steps    int    `json:"steps"`
	Passed   int    `json:"passed"`
	// Up is null when Docker did not say.
	Up *bool `json:"up"`
	// Stopped is set for a lab `labctl stop` stopped.
	Stopped bool      `json:"stopped,omitempty"`
	Source  labSource `json:"source"`
	// Dir holds the installed lab; empty for the built-in lab.
	Dir string `json:"dir"`
	// Error says why an installed lab does not load.
	Error string `json:"error,omitempty"`

	lab *lab.Lab
}

type labSource struct {
	// Kind is built-in, dir, git or bundle.
	Kind string `json:"kind"`
	// Location is the directory, git URL or bundle file installed from.
	Location string    `json:"location,omitempty"`
	Ref      string    `json:"ref,omitempty"`
	Commit   string    `json:"commit,omitempty"`
	Subdir   string    `json:"subdir,omitempty"`
	Install  time.Time `json:"installedAt,omitzero"`
	origin   string
}

func runLabs(ctx context.Context, g *globals, format string) error {
	store, err := g.labStore()
	if err != nil {
		return err
	}
	installed, err := store.List()
	if err != nil {
		return err
	}
	list := labList{Dir: store.Dir(), Labs: []labEntry{}}
	builtIn, err := lab.Parse(builtInLab, labctl.DefaultLab())
	if err != nil {
		return err
	}
	list.Labs = append(list.Labs, newLabEntry(builtIn, labSource{Kind: "built-in", origin: "built-in"}, ""))
	for _, in := range installed {
		src := labSource{Kind: "?", origin: "?"}
		if m := in.Meta; m != nil {
			src = labSource{Kind: m.Kind, Location: m.Source, Ref: m.Ref, Commit: m.Commit, Subdir: m.Subdir, Install: m.InstalledAt, origin: m.Origin()}
		}
		e := newLabEntry(in.Lab, src, in.Dir)
		e.Name = in.Name
		if in.Err != nil {
			e.Error = in.Err.Error()
		}
		list.Labs = append(list.Labs, e)
	}
	g.labsUp(ctx, list.Labs)
	if format == jsonFormat {
		return writeJSON(g.streams.Out, list)
	}
	if err := writeLabTable(g.streams.Out, list); err != nil {
		return err
	}
	if len(installed) == 0 && !g.quiet() {
		fmt.Fprintf(g.streams.Err, "no lab is installed in %s: `labctl install DIR|GIT-URL|BUNDLE` installs one\n", list.Dir)
	}
	return nil
}

// newLabEntry describes lab l (nil when it does not load) with the
// learner's progress in it.
func newLabEntry(l *lab.Lab, src labSource, dir string) labEntry {
	e := labEntry{Source: src, Dir: dir, lab: l}
	if l == nil {
		return e
	}
	m := l.Metadata
	e.Name, e.Title, e.Language, e.Version, e.Steps = m.Name, m.Title, m.Language, m.Version, len(l.Steps)
	if state, err := statedir.Dir(os.Getenv, m.Name); err == nil {
		if p, err := progress.NewStore(state).Load(m.Name); err == nil {
			for _, s := range l.Steps {
				if p.IsPassed(s.ID) {
					e.Passed++
				}
			}
		}
	}
	return e
}

// labsUp asks, for every lab at once and for a few seconds at most,
// whether it is up; a lab Docker did not answer for keeps Up nil.
func (g *globals) labsUp(ctx context.Context, labs []labEntry) {
	ctx, cancel := context.WithTimeout(ctx, upTimeout)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results = make([]*bool, len(labs))
		stopped = make([]bool, len(labs))
	)
	for i := range labs {
		if labs[i].lab == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := g.env.Inspect(ctx, labs[i].lab)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && ctx.Err() == nil {
				up := st.Up()
				results[i] = &up
				stopped[i] = st.Stopped
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Docker did not answer in time: the labs not yet answered
		// stay unknown.
	}
	mu.Lock()
	defer mu.Unlock()
	for i, r := range results {
		labs[i].Up = r
		labs[i].Stopped = stopped[i]
	}
}

// writeLabTable prints the labs as an aligned table; the title, whose
// width the terminal decides, comes last.
func writeLabTable(w io.Writer, list labList) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLANG\tVERSION\tPROGRESS\tUP\tSOURCE\tTITLE")
	for _, e := range list.Labs {
		up := "?"
		if e.Up != nil {
			up = map[bool]string{true: "yes", false: "no"}[*e.Up]
		}
		if e.Stopped {
			up = "stopped"
		}
		progress := fmt.Sprintf("%d/%d", e.Passed, e.Steps)
		title := e.Title
		if e.Error != "" {
			progress, title = "-", "does not load: "+strings.SplitN(e.Error, "\n", 2)[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safe(e.Name), dash(safe(e.Language)), dash(safe(e.Version)), progress, up,
			safe(e.Source.origin), safe(title))
	}
	return tw.Flush()
}

// safe is s with control characters made visible and no tabs, for a
// table cell.
func safe(s string) string { return strings.ReplaceAll(textsafe.EscapeLine(s), "\t", " ") }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
