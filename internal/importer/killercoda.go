package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/labctl/labctl/lab"
)

// labNamespace is the namespace an imported lab's learner starts in: the
// scenario's "default", which a labctl lab cannot own.
const labNamespace = "lab"

// kcIndex is a Killercoda scenario's index.json.
type kcIndex struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Details     struct {
		Intro  *kcPage              `json:"intro"`
		Steps  []kcPage             `json:"steps"`
		Finish *kcPage              `json:"finish"`
		Assets map[string][]kcAsset `json:"assets"`
	} `json:"details"`
	Backend struct {
		ImageID string `json:"imageid"`
	} `json:"backend"`
}

type kcPage struct {
	Title      string `json:"title"`
	Text       string `json:"text"`
	Verify     string `json:"verify"`
	Background string `json:"background"`
	Foreground string `json:"foreground"`
	CourseData string `json:"courseData"`
}

type kcAsset struct {
	File   string `json:"file"`
	Target string `json:"target"`
	Chmod  string `json:"chmod"`
}

// Killercoda imports the Killercoda scenario in src (its index.json, step
// texts, verify, background and foreground scripts, assets) as a lab in
// out, which must not exist or be empty.
func Killercoda(src, out string) (*Result, error) {
	s, err := openSource(src)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	raw, err := s.read("index.json")
	if err != nil {
		return nil, fmt.Errorf("%w (a Killercoda scenario's directory holds index.json)", err)
	}
	var idx kcIndex
	if err := json.Unmarshal([]byte(raw), &idx); err != nil {
		return nil, fmt.Errorf("index.json: %v", err)
	}
	if len(idx.Details.Steps) == 0 {
		if idx.Details.Intro == nil {
			return nil, fmt.Errorf("index.json has no details.steps and no details.intro; it is not a Killercoda scenario")
		}
		// A scenario of one page: its intro is its step.
		idx.Details.Steps, idx.Details.Intro = []kcPage{*idx.Details.Intro}, nil
	}
	im := &importer{src: s, result: &Result{Dir: out, From: "a Killercoda scenario"}, fixtures: map[string][]byte{}}
	lf := im.kcLab(&idx, filepath.Base(filepath.Clean(src)))
	if err := write(out, lf, im.fixtures, im.result); err != nil {
		return nil, err
	}
	return im.result, nil
}

// lab maps the scenario's index to the lab.
func (im *importer) kcLab(idx *kcIndex, dirName string) *labFile {
	lf := im.newLab(dirName, idx.Title, idx.Description)
	im.backend(idx.Backend.ImageID, lf)
	assets := im.assets(idx.Details.Assets)
	var intro, finish *part
	if in := idx.Details.Intro; in != nil {
		intro = im.kcPart("the intro", in)
	}
	steps := make([]part, len(idx.Details.Steps))
	for i := range idx.Details.Steps {
		steps[i] = *im.kcPart(fmt.Sprintf("step %d", i+1), &idx.Details.Steps[i])
	}
	if f := idx.Details.Finish; f != nil {
		finish = im.kcPart("the finish page", f)
	}
	im.build(lf, assets, intro, steps, finish)
	return lf
}

// kcPart reads one page of the scenario and the scripts it names.
func (im *importer) kcPart(what string, p *kcPage) *part {
	pt := &part{what: what, title: oneLine(p.Title), text: im.readPart(what+"'s text", p.Text)}
	for _, s := range []struct{ name, file string }{{"background", p.Background}, {"courseData", p.CourseData}, {"foreground", p.Foreground}} {
		if script := strings.TrimSpace(im.readPart(what+"'s "+s.name+" script", s.file)); script != "" {
			pt.setup = append(pt.setup, "# "+what+": "+s.name+" script\n"+script)
		}
	}
	if p.Verify != "" {
		pt.verify = im.readPart(what+"'s verify script", p.Verify)
		pt.hasVerify = true
	}
	return pt
}

// backend maps the machine the scenario ran on.
func (im *importer) backend(id string, lf *labFile) {
	switch {
	case strings.Contains(id, "2nodes"):
		lf.Cluster.Workers = []struct{}{{}}
	case !strings.Contains(id, "kubernetes"):
		im.todo("the scenario ran on a machine without Kubernetes (%q); labctl gives every lab a cluster, and the sandbox is Debian, not that image: check that the tools it uses are in the sandbox", id)
	}
}

// namespace adds a namespace the scenario uses to the lab's.
func (im *importer) namespace(ns string, lf *labFile) {
	if ns == "" || slices.Contains(lf.Cluster.Namespaces, ns) {
		return
	}
	if lab.ReservedNamespace(ns) != "" {
		im.todo("the source uses namespace %s, which a lab cannot own: move that work into a namespace of the lab", ns)
		return
	}
	if len(ns) > 63 || !dnsLabelRE.MatchString(ns) {
		return
	}
	lf.Cluster.Namespaces = append(lf.Cluster.Namespaces, ns)
}

var (
	dnsLabelRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	nsFlagRE    = regexp.MustCompile(`(?:^|\s)(?:-n|--namespace)[= ]?([a-z0-9][a-z0-9-]*)\b`)
	createNSRE  = regexp.MustCompile(`kubectl\s+create\s+(?:ns|namespace)\s+([a-z0-9][a-z0-9-]*)`)
	clusterRE   = regexp.MustCompile(`kubectl\s+(?:(?:get|describe)\s+(?:nodes?|no)\b|taint\b|cordon\b|drain\b|uncordon\b|label\s+(?:nodes?|no)\b|create\s+clusterrole|apply\s+.*crd)`)
	imageFlagRE = regexp.MustCompile(`--image[= ]([^\s'"]+)|\bimage:\s*['"]?([^\s'"]+)`)
	internetRE  = regexp.MustCompile(`\b(curl|wget|apt(?:-get)?\s+install|pip3?\s+install|helm\s+repo\s+add|git\s+clone|go\s+install|npm\s+install)\b`)
	tagRE2      = regexp.MustCompile(`^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9._-]+$`)
)

// scan reads every script and command of the scenario for what a labctl
// lab must declare or cannot do: namespaces, images, cluster-wide work,
// the internet.
func (im *importer) scan(lf *labFile) {
	all := strings.Join(im.scripts, "\n")
	for _, m := range nsFlagRE.FindAllStringSubmatch(all, -1) {
		im.namespace(m[1], lf)
	}
	for _, m := range createNSRE.FindAllStringSubmatch(all, -1) {
		im.todo("the source creates namespace %s; labctl creates the lab's namespaces at up and the learner cannot create others: drop that command from the step and its solve", m[1])
	}
	if m := clusterRE.FindString(all); m != "" {
		im.todo("the source works on the cluster as a whole (%s); the learner is admin of the lab's namespaces only: grant what the step needs in access.clusterRules, or change the step", strings.Join(strings.Fields(m), " "))
	}
	seen := map[string]bool{}
	for _, m := range imageFlagRE.FindAllStringSubmatch(all, -1) {
		ref := m[1] + m[2]
		if seen[ref] || strings.ContainsAny(ref, "${}") {
			continue
		}
		seen[ref] = true
		if tagRE2.MatchString(ref) && !strings.HasSuffix(ref, ":latest") {
			lf.Cluster.Images = append(lf.Cluster.Images, image{Name: ref})
			im.todo("image %s: no registry answers in a lab; build it (cluster.images[].build) or have it in the host's Docker engine before labctl up", ref)
		} else {
			im.todo("image %s has no fixed tag: pin one and list it in cluster.images (labctl loads images, it never pulls them)", ref)
		}
	}
	if m := internetRE.FindAllString(all, -1); len(m) > 0 {
		slices.Sort(m)
		im.todo("the source reaches the internet (%s), which a lab's sandbox cannot: put what it fetches in fixtures/ or an image", strings.Join(slices.Compact(m), ", "))
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
