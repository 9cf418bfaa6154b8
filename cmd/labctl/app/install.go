package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/usecase/labstore"
)

type installOptions struct {
	ref    string
	subdir string
	force  bool
	// allowHostAccess consents to a lab that reaches the host.
	allowHostAccess bool
}

func newInstallCommand(g *globals) *cobra.Command {
	var o installOptions
	cmd := &cobra.Command{
		Use:   "install DIR|GIT-URL|BUNDLE",
		Short: "Install a lab from its directory, a git repository or a bundle file, to use it with --lab NAME",
		Long: "install copies a lab into the labs directory ($LABCTL_LABS_DIR, else $XDG_DATA_HOME/labctl/labs, else\n" +
			"~/.local/share/labctl/labs), under its name, so that `labctl --lab NAME up` finds it anywhere:\n" +
			"  DIR        a lab's directory (lab.yaml, fixtures/, README.md and its images' build directories)\n" +
			"  GIT-URL    a git repository (https://, ssh://, file:// or a local repository), at --ref (a branch, tag\n" +
			"             or commit; default its HEAD), the lab at its top or in --subdir; the commit is recorded\n" +
			"  BUNDLE     a file written by `labctl pack`: every entry is checked against its manifest, then its\n" +
			"             images are loaded into Docker (unless present); it may tag only the manifest's images,\n" +
			"             never labctl's own, and never over another image of the same name\n" +
			"Only the lab's files are installed; links, sparse files and tools' configuration (.git, go.work, …)\n" +
			"are refused. The lab must load (`labctl lint`) before anything is installed, and it lands in one step: an error or\n" +
			"Ctrl-C leaves the labs directory as it was. The same lab installed again changes nothing; a different\n" +
			"lab of an installed name is refused unless --force.\n" +
			"install prints what the lab may do (its Pod Security level, the learner's rules, the scripts it runs as\n" +
			"root, its images). A lab that asks for what reaches this machine (privileged Pod Security, cluster-wide\n" +
			"rules beyond reading, its own node or sandbox image) is refused unless --allow-host-access: give it only\n" +
			"to a lab whose author you trust with root on this machine.",
		Example: "  labctl install ./labs/debug-rollout\n" +
			"  labctl install debug-rollout-1.labctl.tar && labctl --lab debug-rollout up\n" +
			"  labctl install https://example.com/labs.git --ref v1 --subdir debug-rollout",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd.Context(), g, args[0], o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ref, "ref", "", "with a git repository: install the branch, tag or commit `REF` (default: its HEAD)")
	fl.StringVar(&o.subdir, "subdir", "", "with a git repository: the lab is in its directory `DIR` (default: its top)")
	fl.BoolVar(&o.force, "force", false, "replace an installed lab of the same name, whatever its files")
	addAllowHostAccessFlag(fl, &o.allowHostAccess)
	return cmd
}

func runInstall(ctx context.Context, g *globals, source string, o installOptions) error {
	store, err := g.labStore()
	if err != nil {
		return err
	}
	opts := imageOptions(g, imagesOptions{})
	res, err := store.Install(ctx, source, labstore.Options{
		Ref: o.ref, Subdir: o.subdir, Force: o.force, AllowHostAccess: o.allowHostAccess,
		Images: engineImages{g: g, opts: opts, what: filepath.Base(source)},
		Waiting: func() {
			fmt.Fprintf(g.streams.Err, "waiting for another labctl installing into %s\n", store.Dir())
		},
	})
	if errors.Is(err, context.Canceled) {
		return &ExitError{Code: exitInterrupted, Err: errors.New("install was interrupted: nothing was installed")}
	}
	if err != nil {
		return err
	}
	name := res.Lab.Metadata.Name
	var b strings.Builder
	switch {
	case res.Unchanged:
		fmt.Fprintf(&b, "%s is already installed (from %s): nothing changed", name, res.Meta.Origin())
	case res.Previous != nil:
		fmt.Fprintf(&b, "replaced %s (from %s) with %s from %s", name, res.Previous.Origin(), describeLab(res), res.Meta.Origin())
	default:
		fmt.Fprintf(&b, "installed %s from %s", describeLab(res), res.Meta.Origin())
	}
	if len(res.Loaded) > 0 {
		fmt.Fprintf(&b, "; loaded %s: %s", count(len(res.Loaded), "image"), strings.Join(res.Loaded, ", "))
	}
	fmt.Fprintln(g.streams.Out, textsafe.EscapeLine(b.String()))
	if !res.Unchanged {
		if err := printPowers(g.streams.Out, res.Lab); err != nil {
			return err
		}
	}
	if !g.quiet() && !res.Unchanged {
		fmt.Fprintf(g.streams.Err, "start it with: labctl --lab %s up\n", name)
	}
	return nil
}

// describeLab is "NAME (TITLE, version V)" for messages.
func describeLab(res *labstore.Result) string {
	m := res.Lab.Metadata
	var about []string
	if m.Title != "" {
		about = append(about, m.Title)
	}
	if m.Version != "" {
		about = append(about, "version "+m.Version)
	}
	if len(about) == 0 {
		return m.Name
	}
	return m.Name + " (" + strings.Join(about, ", ") + ")"
}

// engineImages is the Docker engine as an install of a bundle uses it.
type engineImages struct {
	g    *globals
	opts images.Options
	what string
}

func (e engineImages) Present(ctx context.Context, refs []string) (map[string]string, error) {
	return e.g.env.ImagesPresent(ctx, e.opts, refs)
}

func (e engineImages) Load(ctx context.Context, r io.Reader) ([]string, error) {
	return e.g.env.LoadImagesFrom(ctx, e.opts, r, e.what)
}
