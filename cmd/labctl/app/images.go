package app

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision"
)

type imagesOptions struct {
	offline bool
	node    bool
	sandbox bool
	source  string
}

func newImagesCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "images",
		Short:   "Build, list, save and load the node and sandbox images",
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
			l, _, _, err := g.loadLab()
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
			out, err := provision.KindConfigFile(l, ref)
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
		Short: "Ensure the node and sandbox images: use present ones, pull when a registry answers, else build offline",
		Long: "build makes the kind node image and the learner's sandbox image present in the local Docker engine.\n" +
			"An image built from the current recipe is used as it is. Otherwise a registry is tried (unless\n" +
			"--offline), and failing that the image is built from Debian packages and Go modules: this needs\n" +
			"root, debootstrap, Go and the labctl source tree (--source, default: found from the working directory).",
		Example: "  labctl images build\n  labctl images build --offline --node",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.node && o.sandbox {
				return &usageError{cmd: cmd, err: errors.New("--node and --sandbox exclude each other: give one, or neither for both")}
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
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.offline, "offline", false, "never try a registry: use present images or build locally")
	fl.BoolVar(&o.node, "node", false, "only the node image")
	fl.BoolVar(&o.sandbox, "sandbox", false, "only the sandbox image")
	fl.StringVar(&o.source, "source", "", "labctl source tree to build from (default: found from the working directory)")
	return cmd
}

func newImagesListCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List labctl's images in the local Docker engine (* marks the ones this labctl uses)",
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
			if format == jsonFormat {
				return writeJSON(g.streams.Out, imageListing(list, missing))
			}
			if err := writeImageTable(g.streams.Out, list); err != nil {
				return err
			}
			for _, ref := range missing {
				fmt.Fprintf(g.streams.Err, "missing: %s (run `labctl images build`)\n", ref)
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
		Node: o.node, Sandbox: o.sandbox, Pull: !o.offline,
		SourceDir: o.source, Log: log,
		Status: statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true}),
	}
}
