package app

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
)

type imagesOptions struct {
	offline bool
	node    bool
	sandbox bool
	source  string
	addons  bool
}

func newImagesCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "images",
		Short:   "Build, list, save and load the node and sandbox images and the lab's workload images",
		Example: "  labctl images build\n  labctl images list",
	}
	cmd.AddCommand(newImagesBuildCommand(g), newImagesListCommand(g), newImagesSaveCommand(g), newImagesLoadCommand(g), newImagesKindConfigCommand(g))
	return cmd
}

func newImagesKindConfigCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "kind-config [NODE_IMAGE]",
		Short: "Print the kind cluster file labctl uses for a node image (default: this labctl's)",
		Long: "kind-config prints the kind v1alpha4 cluster file with the settings labctl gives kind for the\n" +
			"lab's cluster on NODE_IMAGE, so that `kind create cluster --config` can make the same cluster by hand.\n" +
			"It writes the lab's API server audit policy into the lab's state directory first: the file names it.",
		Example: "  labctl images kind-config > cluster.yaml && kind create cluster --config cluster.yaml",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			l, _, _, _, err := g.loadLab()
			if err != nil {
				return err
			}
			ref := l.Cluster.NodeImage
			if ref == "" {
				ref = images.NodeRef()
			}
			if len(args) == 1 {
				ref = args[0]
			}
			out, err := kind.KindConfigFile(l, ref)
			if err != nil {
				return err
			}
			_, err = g.streams.Out.Write(out)
			return err
		},
	}
}

func newImagesBuildCommand(g *globals) *cobra.Command {
	var o imagesOptions
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Ensure the node, sandbox and workload images: use present ones, pull when a registry answers, else build offline",
		Long: "build makes the kind node image and the learner's sandbox image present in the local Docker engine.\n" +
			"An image built from the current recipe is used as it is. Otherwise a registry is tried (unless\n" +
			"--offline), and failing that the image is built from Debian packages and Go modules: this needs\n" +
			"root, debootstrap, Go and the labctl source tree (--source, default: found from the working directory).\n" +
			"Without --node or --sandbox it also ensures the lab's workload images (cluster.images): those with a\n" +
			"build directory are built from it (again when it changed), the others pulled when a registry answers.",
		Example: "  labctl images build\n  labctl images build --offline --node\n  labctl images build --offline --addons",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.node && o.sandbox {
				return &usageError{cmd: cmd, err: errors.New("--node and --sandbox exclude each other: give one, or neither for both")}
			}
			workloads := !o.node && !o.sandbox
			var (
				l      *lab.Lab
				labDir string
			)
			if workloads {
				var err error
				if l, _, _, labDir, err = g.loadLab(); err != nil {
					return err
				}
			}
			refs, err := g.env.EnsureImages(cmd.Context(), imageOptions(g, o))
			if err != nil {
				return err
			}
			if refs.Node != "" {
				fmt.Fprintf(g.streams.Out, "node\t%s\n", refs.Node)
			}
			if refs.Sandbox != "" {
				fmt.Fprintf(g.streams.Out, "sandbox\t%s\n", refs.Sandbox)
			}
			if refs.Addons != "" {
				fmt.Fprintf(g.streams.Out, "addons\t%s\nserve-addons\t%s\n", refs.Addons, refs.ServeAddons)
			}
			if !workloads {
				return nil
			}
			present, err := g.env.EnsureWorkloads(cmd.Context(), imageOptions(g, o), l, labDir)
			if err != nil {
				return err
			}
			for _, ref := range present {
				fmt.Fprintf(g.streams.Out, "workload\t%s\n", ref)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.offline, "offline", false, "never try a registry: use present images or build locally")
	fl.BoolVar(&o.node, "node", false, "only the node image")
	fl.BoolVar(&o.sandbox, "sandbox", false, "only the sandbox image")
	fl.BoolVar(&o.addons, "addons", false, "also the add-on images (network policy, storage, ingress, metrics), "+
		"which a lab with add-ons or workers otherwise builds at its first up")
	fl.StringVar(&o.source, "source", "", "labctl source tree to build from (default: found from the working directory)")
	return cmd
}

func newImagesListCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List labctl's images in the local Docker engine (* marks the ones this labctl uses) and the lab's workload images",
		Example: "  labctl images list\n  labctl images list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := g.env.ListImages(cmd.Context(), imageOptions(g, imagesOptions{}))
			if err != nil {
				return err
			}
			var missing []string
			for _, want := range []string{images.NodeRef(), images.SandboxRef()} {
				if !listed(list, want) {
					missing = append(missing, want)
				}
			}
			var workloads []images.Workload
			l, _, source, _, err := g.loadLab()
			if err != nil {
				fmt.Fprintf(g.streams.Err, "the lab's workload images are not listed: %s does not load (run `labctl lint`)\n", source)
			} else if workloads, err = g.env.Workloads(cmd.Context(), imageOptions(g, imagesOptions{}), l); err != nil {
				return err
			}
			if format == jsonFormat {
				out := imageListing(list, missing)
				out.Workloads = workloadListing(workloads)
				return writeJSON(g.streams.Out, out)
			}
			if err := writeImageTable(g.streams.Out, list); err != nil {
				return err
			}
			if len(workloads) > 0 {
				if err := writeWorkloadTable(g.streams.Out, l.Metadata.Name, workloads); err != nil {
					return err
				}
			}
			for _, ref := range missing {
				fmt.Fprintf(g.streams.Err, "missing: %s (run `labctl images build`)\n", ref)
			}
			for _, w := range workloads {
				if !w.Present {
					fmt.Fprintf(g.streams.Err, "missing: %s\n", missingWorkload(w))
				}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

// imageList is `labctl images list -o json`; its field names are stable
// (docs/cli.md).
type imageList struct {
	Images []imageEntry `json:"images"`
	// Missing are the images this labctl uses that the engine lacks.
	Missing []string `json:"missing"`
	// Workloads are the lab's workload images (cluster.images).
	Workloads []workloadEntry `json:"workloads"`
}

type workloadEntry struct {
	Ref      string `json:"ref"`
	Build    string `json:"build,omitempty"`
	Optional bool   `json:"optional"`
	Present  bool   `json:"present"`
	ID       string `json:"id,omitempty"`
	Size     string `json:"size,omitempty"`
	Created  string `json:"created,omitempty"`
}

func workloadListing(list []images.Workload) []workloadEntry {
	out := []workloadEntry{}
	for _, w := range list {
		out = append(out, workloadEntry{Ref: w.Name, Build: w.Build, Optional: w.Optional, Present: w.Present,
			ID: w.ID, Size: w.Size, Created: w.Created})
	}
	return out
}

// writeWorkloadTable prints the lab's workload images as an aligned table:
// whether the engine has each one, and where it comes from.
func writeWorkloadTable(w io.Writer, labName string, list []images.Workload) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\n  WORKLOAD IMAGE (LAB %s)\tPRESENT\tID\tSIZE\tFROM\n", labName)
	for _, im := range list {
		present, id, size := "no", "-", "-"
		if im.Present {
			present, id, size = "yes", im.ID, im.Size
		}
		from := "the host's engine"
		if im.Build != "" {
			from = "build " + im.Build
		}
		if im.Optional {
			from += " (optional)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", im.Name, present, id, size, from)
	}
	return tw.Flush()
}

// missingWorkload says how to get a workload image the engine lacks.
func missingWorkload(w images.Workload) string {
	switch {
	case w.Build != "":
		return fmt.Sprintf("%s (run `labctl images build`)", w.Name)
	case w.Optional:
		return fmt.Sprintf("%s (optional: the Pods that run it will not start; `docker pull %s` where a registry answers)", w.Name, w.Name)
	}
	return fmt.Sprintf("%s (`docker pull %s` where a registry answers, or `labctl install` a bundle that holds it)", w.Name, w.Name)
}

type imageEntry struct {
	Ref     string `json:"ref"`
	ID      string `json:"id"`
	Size    string `json:"size"`
	Created string `json:"created"`
	Current bool   `json:"current"`
}

func imageListing(list []images.Image, missing []string) imageList {
	out := imageList{Images: []imageEntry{}, Missing: append([]string{}, missing...)}
	for _, im := range list {
		out.Images = append(out.Images, imageEntry{Ref: im.Ref, ID: im.ID, Size: im.Size, Created: im.Created, Current: im.Current})
	}
	return out
}

// writeImageTable prints list as an aligned table with a header; * marks
// the images this labctl uses.
func writeImageTable(w io.Writer, list []images.Image) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  IMAGE\tID\tSIZE\tCREATED")
	for _, im := range list {
		mark := " "
		if im.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\n", mark, im.Ref, im.ID, im.Size, im.Created)
	}
	return tw.Flush()
}

func listed(list []images.Image, ref string) bool {
	for _, im := range list {
		if im.Ref == ref {
			return true
		}
	}
	return false
}

func newImagesSaveCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "save FILE",
		Short:   "Write the node and sandbox images into one bundle file for an offline machine",
		Example: "  labctl images save labctl-images.tar",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs := images.Refs{Node: images.NodeRef(), Sandbox: images.SandboxRef()}
			if err := g.env.SaveImages(cmd.Context(), imageOptions(g, imagesOptions{}), args[0], refs); err != nil {
				return err
			}
			_, err := fmt.Fprintln(g.streams.Out, args[0])
			return err
		},
	}
}

func newImagesLoadCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "load FILE",
		Short:   "Load a bundle written by `labctl images save`",
		Example: "  labctl images load labctl-images.tar",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			loaded, err := g.env.LoadImages(cmd.Context(), imageOptions(g, imagesOptions{}), args[0])
			if err != nil {
				return err
			}
			for _, ref := range loaded {
				fmt.Fprintln(g.streams.Out, ref)
			}
			return nil
		},
	}
}

func imageOptions(g *globals, o imagesOptions) images.Options {
	var log io.Writer
	if g.verbose() {
		log = g.streams.Err
	}
	return images.Options{
		Node: o.node, Sandbox: o.sandbox, Pull: !o.offline, Addons: o.addons,
		SourceDir: o.source, Log: log,
		Status: statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true}),
	}
}
