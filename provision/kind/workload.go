package kind

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
)

// imageIDLabel is the containerd label, on an image up loaded into the
// node, that holds the ID the image had in the host's engine: the node holds
// an image up to date when its name carries the ID the host's has now.
const imageIDLabel = "dev.labctl.image-id"

// ensureWorkloads makes the lab's workload images present in the host's
// engine (building the lab's own), before anything is created: a required
// image that is missing fails the up here. It notes the optional images
// that are missing, whose Pods will not start.
func (r *upRun) ensureWorkloads(ctx context.Context) error {
	present, err := images.EnsureWorkloads(ctx, images.Options{Status: r.st.Nest(), Log: r.opts.Log}, r.lab, r.opts.LabDir)
	if err != nil {
		return err
	}
	r.workloads = present
	have := map[string]bool{}
	for _, ref := range present {
		have[ref] = true
	}
	for _, im := range r.lab.Cluster.Images {
		if !have[im.Name] {
			r.st.Printf("%s", r.say(msg.StatusOptionalImageMissing, im.Name, "`docker pull "+im.Name+"`", "`labctl up`"))
		}
	}
	return nil
}

// loadWorkloads loads the workload images into the cluster's node, those
// the node does not hold yet in the host's version: one exec asks the
// node's containerd, and only then are images saved and imported.
func (r *upRun) loadWorkloads(ctx context.Context) error {
	if len(r.workloads) == 0 {
		return nil
	}
	missing, err := r.kind.missingImages(ctx, r.engine, r.workloads, controlPlaneNode(r.lab.Metadata.Name))
	if err != nil || len(missing) == 0 {
		return err
	}
	r.st.Start(r.say(msg.StatusLoadingImages, strings.Join(missing, ", ")))
	return r.kind.loadLabelled(ctx, r.engine, missing, controlPlaneNode(r.lab.Metadata.Name))
}

// missingImages are those of refs that one of nodes does not hold yet in
// the host's version: one exec per node asks its containerd.
func (k *kind) missingImages(ctx context.Context, engine *docker.Engine, refs []string, nodes ...string) ([]string, error) {
	ids, err := hostImageIDs(ctx, engine, refs)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, node := range nodes {
		held, err := nodeImagesHeld(ctx, engine, node, ids)
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			if !held[lab.NormalizeImageName(ref)] && !slices.Contains(missing, ref) {
				missing = append(missing, ref)
			}
		}
	}
	return missing, nil
}

// loadLabelled loads refs into every node of the cluster and records on
// them, in each of nodes, the host's image ID (missingImages reads it).
func (k *kind) loadLabelled(ctx context.Context, engine *docker.Engine, refs []string, nodes ...string) error {
	ids, err := hostImageIDs(ctx, engine, refs)
	if err != nil {
		return err
	}
	if err := k.loadImages(ctx, engine, refs); err != nil {
		return err
	}
	for _, node := range nodes {
		if err := labelNodeImages(ctx, engine, node, refs, ids); err != nil {
			return err
		}
	}
	return nil
}

// hostImageIDs are the host engine's image IDs of refs.
func hostImageIDs(ctx context.Context, engine *docker.Engine, refs []string) (map[string]string, error) {
	ids := make(map[string]string, len(refs))
	for _, ref := range refs {
		id, err := engine.ImageID(ctx, ref)
		if err != nil {
			return nil, err
		}
		ids[ref] = id
	}
	return ids, nil
}

// nodeImagesHeld returns the images of ids (reference -> the host's image
// ID) that the node's containerd holds under their name with that ID, by
// their normalized names.
func nodeImagesHeld(ctx context.Context, engine *docker.Engine, node string, ids map[string]string) (map[string]bool, error) {
	cmd := []string{"ctr", "--namespace=k8s.io", "images", "list", "--quiet"}
	for ref, id := range ids {
		cmd = append(cmd, heldFilter(ref, id))
	}
	out, err := execIn(ctx, engine, node, cmd)
	if err != nil {
		return nil, fmt.Errorf("listing the images of the cluster's node: %w", err)
	}
	held := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if name := strings.TrimSpace(line); name != "" {
			held[name] = true
		}
	}
	return held, nil
}

// heldFilter is the containerd image filter that matches ref, as
// containerd names it, when it carries the host's image ID.
func heldFilter(ref, id string) string {
	return fmt.Sprintf("name==%q,labels.%q==%q", lab.NormalizeImageName(ref), imageIDLabel, id)
}

// labelNodeImages records on each of refs, in the node's containerd, the
// ID the host's engine gave it.
func labelNodeImages(ctx context.Context, engine *docker.Engine, node string, refs []string, ids map[string]string) error {
	cmd := []string{"sh", "-ec", `while [ $# -gt 0 ]; do ctr --namespace=k8s.io images label "$1" "$2" >/dev/null; shift 2; done`, "label"}
	for _, ref := range refs {
		cmd = append(cmd, lab.NormalizeImageName(ref), imageIDLabel+"="+ids[ref])
	}
	if _, err := execIn(ctx, engine, node, cmd); err != nil {
		return fmt.Errorf("labelling the images loaded into the cluster's node: %w", err)
	}
	return nil
}

// execIn runs cmd in container name and returns its output; a non-zero exit
// is an error carrying the output.
func execIn(ctx context.Context, engine *docker.Engine, name string, cmd []string) (string, error) {
	var out, errOut bytes.Buffer
	code, err := engine.Exec(ctx, name, docker.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &errOut})
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("%s exited with %d: %s", cmd[0], code, provision.LastLines(strings.TrimSpace(errOut.String()+"\n"+out.String()), 10))
	}
	return out.String(), nil
}

// loadImages imports refs from the host's engine into every node of the
// cluster's containerd, as `kind load docker-image` does, streaming one
// `docker save` of them (no file).
func (k *kind) loadImages(ctx context.Context, engine *docker.Engine, refs []string) error {
	list, err := runBounded(ctx, time.Minute, func() ([]nodes.Node, error) { return k.provider.ListInternalNodes(k.name) })
	if err != nil {
		return fmt.Errorf("listing the nodes of %s: %w", k.name, err)
	}
	for _, n := range list {
		archive, err := engine.SaveImages(ctx, refs)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, archive)
		archive.Close()
		if err != nil {
			return fmt.Errorf("loading %s into node %s: %w%s", strings.Join(refs, ", "), n.String(), err, commandOutput(err))
		}
	}
	return nil
}
