package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
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
	return KillercodaWith(src, out, Options{})
}

// KillercodaWith is Killercoda with options.
func KillercodaWith(src, out string, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
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
	im := &importer{src: s, opts: o, result: &Result{Dir: out, From: "a Killercoda scenario"}, fixtures: map[string][]byte{}}
	lf := im.kcLab(&idx, filepath.Base(filepath.Clean(src)))
	if s.over != nil {
		return nil, s.over
	}
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
