package kind

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/preflight"
)

// imageRefs are the images a run uses.
type imageRefs struct {
	node, sandbox string
}

// preflight checks the machine before anything is created.
func (r *upRun) preflight(ctx context.Context) error {
	if r.opts.SkipPreflight {
		return nil
	}
	var failed []string
	for _, f := range preflight.Run(ctx) {
		if f.OK {
			continue
		}
		message, fix := f.Words(r.opts.Catalog)
		r.st.Printf("%s: %s", f.Name, message)
		if fix != "" {
			r.st.Printf("  %s", r.say(msg.StatusFix, fix))
		}
		failed = append(failed, f.Name)
	}
	if len(failed) > 0 {
		return fmt.Errorf("the machine is not ready for a lab (%s): apply the fixes above, then run `labctl up` again", strings.Join(failed, ", "))
	}
	return nil
}

// ensureImages decides the node and sandbox images (options, then the lab,
// then labctl's own) and makes sure both are present: labctl's own are
// ensured by images.Ensure (built when missing), others must be present.
// Then the lab's workload images (ensureWorkloads). A lab with no cluster
// needs the sandbox image only.
func (r *upRun) ensureImages(ctx context.Context) error {
	r.images = imageRefs{node: r.opts.NodeImage, sandbox: r.opts.SandboxImage}
	if r.images.node == "" {
		r.images.node = r.lab.Cluster.NodeImage
	}
	if r.images.sandbox == "" {
		r.images.sandbox = r.lab.Sandbox.Image
	}
	cluster := r.lab.HasCluster()
	if !cluster {
		r.images.node = ""
	}
	want := images.Options{Node: cluster && r.images.node == "", Sandbox: r.images.sandbox == "", Status: r.st.Nest(), Log: r.opts.Log}
	if want.Node || want.Sandbox {
		refs, err := images.Ensure(ctx, want)
		if err != nil {
			return err
		}
		if want.Node {
			r.images.node = refs.Node
		}
		if want.Sandbox {
			r.images.sandbox = refs.Sandbox
		}
	}
	for _, ref := range []string{r.images.node, r.images.sandbox} {
		if ref == "" {
			continue
		}
		ok, err := r.engine.ImagePresent(ctx, ref)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("image %s is not present: load it (`labctl images load FILE`) or `docker pull` it", ref)
		}
	}
	if !cluster {
		return nil
	}
	r.cluster = clusterConfig(r.lab, r.images.node, filepath.Join(r.dir, "audit"))
	if err := r.ensureWorkloads(ctx); err != nil {
		return err
	}
	// Reach checks start their Pods from the node add-ons image too.
	if needsNodeAddonsImage(r.lab, r.images.node) {
		ref, err := images.EnsureAddons(ctx, images.Options{Status: r.st.Nest(), Log: r.opts.Log})
		if err != nil {
			return err
		}
		r.workloads = append(r.workloads, ref)
	}
	if needsServeImage(r.lab) {
		ref, err := images.EnsureServeAddons(ctx, images.Options{Status: r.st.Nest(), Log: r.opts.Log})
		if err != nil {
			return err
		}
		r.workloads = append(r.workloads, ref)
	}
	return nil
}
