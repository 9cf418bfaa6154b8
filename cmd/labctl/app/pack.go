package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/usecase/labstore"
)

func newPackCommand(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Write the lab and every image it runs into one bundle file for a machine without a registry",
		Long: "pack writes the lab (--lab) into one bundle file: its lab.yaml, fixtures/, README.md and the build\n" +
			"directories of its images, and the lab's images (its workload images, built offline when missing, and a\n" +
			"node or sandbox image of its own) as one `docker save` tar. labctl's own node and sandbox images never\n" +
			"go into a bundle: the other machine builds them (`labctl images build`) or loads them from a file its\n" +
			"operator trusts (`labctl images save` here, `labctl images load` there). `labctl install FILE` on the other\n" +
			"machine installs the lab and loads its images. The default file is ./<name>-<version>" + labstore.BundleSuffix + ".",
		Example: "  labctl --lab ./my-lab pack\n  labctl --lab debug-rollout pack --output-file /media/usb/debug-rollout.labctl.tar",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPack(cmd.Context(), g, output)
		},
	}
	cmd.Flags().StringVar(&output, "output-file", "", "the bundle `FILE` to write (default ./<name>-<version>"+labstore.BundleSuffix+")")
	return cmd
}

func runPack(ctx context.Context, g *globals, output string) error {
	l, _, source, dir, err := g.loadLab()
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("lab %s is built into every labctl and needs no bundle: give a lab with --lab, or carry the images with `labctl images save FILE`", l.Metadata.Name)
	}
	if output == "" {
		output = labstore.BundleName(l)
	}
	opts := imageOptions(g, imagesOptions{offline: true})
	// labctl's own node and sandbox images never travel in a lab's
	// bundle (install refuses them): only a lab's own choices do.
	var refs []string
	for _, ref := range []string{l.Cluster.NodeImage, l.Sandbox.Image} {
		if ref != "" && !labstore.ReservedImage(ref) && !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	workloads, err := g.env.EnsureWorkloads(ctx, opts, l, dir)
	if err != nil {
		return err
	}
	for _, ref := range workloads {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	ids, err := g.env.ImagesPresent(ctx, opts, refs)
	if err != nil {
		return err
	}
	var list []bundle.Image
	for _, ref := range refs {
		id, ok := ids[ref]
		if !ok {
			return fmt.Errorf("image %s is not present: `docker pull` or `docker load` it, then pack again", ref)
		}
		list = append(list, bundle.Image{Ref: ref, ID: id})
	}
	labFile, err := filepath.Abs(source)
	if err != nil {
		return err
	}
	m, err := labstore.Pack(ctx, labstore.PackOptions{
		LabFile: labFile, Lab: l, Output: output, Labctl: Version, Images: list,
		SaveImages: func(ctx context.Context, w io.Writer) error { return g.env.SaveImagesTo(ctx, opts, w, refs) },
	})
	if errors.Is(err, context.Canceled) {
		return &ExitError{Code: exitInterrupted, Err: errors.New("pack was interrupted: no bundle was written")}
	}
	if err != nil {
		return err
	}
	size := ""
	if info, err := os.Stat(output); err == nil {
		size = fmt.Sprintf(", %.1f MB", float64(info.Size())/1e6)
	}
	if !g.quiet() {
		files := 0
		for _, e := range m.Entries {
			if e.Kind == bundle.KindFile {
				files++
			}
		}
		fmt.Fprintf(g.streams.Err, "packed lab %s (%s, %s%s): install it with `labctl install %s`\n",
			m.Lab.Name, count(files, "file"), count(len(m.Images), "image"), size, output)
	}
	_, err = fmt.Fprintln(g.streams.Out, output)
	return err
}
