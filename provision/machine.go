package provision

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/preflight"
	"github.com/labctl/labctl/internal/statusline"
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
func (r *upRun) ensureImages(ctx context.Context) error {
	r.images = imageRefs{node: r.opts.NodeImage, sandbox: r.opts.SandboxImage}
	if r.images.node == "" {
		r.images.node = r.lab.Cluster.NodeImage
	}
	if r.images.sandbox == "" {
		r.images.sandbox = r.lab.Sandbox.Image
	}
	want := images.Options{Node: r.images.node == "", Sandbox: r.images.sandbox == "", Status: detailWriter{r.st}, Log: r.opts.Log}
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
		ok, err := r.engine.ImagePresent(ctx, ref)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("image %s is not present: load it (`labctl images load FILE`) or `docker pull` it", ref)
		}
	}
	ks := images.KindSettingsFor(r.images.node)
	r.cluster = ClusterConfig{
		NodeImage:         r.images.node,
		DisableDefaultCNI: ks.DisableDefaultCNI,
		KubeadmPatches:    ks.KubeadmConfigPatches,
		WaitForReady:      3 * time.Minute,
		AuditDir:          filepath.Join(r.dir, "audit"),
		AuditPolicy:       auditPolicy(r.lab),
	}
	return nil
}

// detailWriter prints each line written to it as a detail line under the
// current status step.
type detailWriter struct{ st *statusline.Logger }

func (d detailWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			d.st.Printf("%s", strings.TrimSpace(l))
		}
	}
	return len(p), nil
}
