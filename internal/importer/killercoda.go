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

// placeholderCheck stands for the checks of a step the scenario does
// not verify: it always fails, so labctl test says what is missing.
var placeholderCheck = check{
	Name:        "write-this-check",
	Description: "the scenario verifies nothing here; write the checks that prove this step",
	Command:     &commandCheck{Run: []string{"false"}},
}

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
	im := &kcImport{src: s, result: &Result{Dir: out}, fixtures: map[string][]byte{}}
	lf, err := im.lab(&idx, filepath.Base(filepath.Clean(src)))
	if err != nil {
		return nil, err
	}
	if err := write(out, lf, im.fixtures, im.result); err != nil {
		return nil, err
	}
	return im.result, nil
}

type kcImport struct {
	src      *source
	result   *Result
	fixtures map[string][]byte
	// scripts are every script and command of the scenario, scanned for
	// namespaces, images and the internet.
	scripts []string
}

func (im *kcImport) todo(format string, args ...any) {
	t := fmt.Sprintf(format, args...)
	if !slices.Contains(im.result.Todo, t) {
		im.result.Todo = append(im.result.Todo, t)
	}
}

// readPart reads a file the index names, or records that it could not.
func (im *kcImport) readPart(what, name string) string {
	if name == "" {
		return ""
	}
	text, err := im.src.read(name)
	if err != nil {
		im.todo("%s was not imported: %v", what, err)
		return ""
	}
	return text
}

// draft is a step being built; reading steps (no verify) join the next
// step that checks something.
type draft struct {
	titles       []string
	instructions []string
	setup        []string
	hints        []string
	solve        []string
	solved       bool
	checks       []check
	typed        bool
	verified     bool
}

func (im *kcImport) lab(idx *kcIndex, dirName string) (*labFile, error) {
	name := slug(dirName, 40)
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = slug("imported-"+name, 40)
	}
	lf := &labFile{
		APIVersion: lab.APIVersion,
		Kind:       lab.Kind,
		Metadata: metadata{Name: strings.Trim(name, "-"), Title: oneLine(idx.Title),
			Goal: strings.TrimSpace(strings.TrimSpace(idx.Description) + "\n\nYour kubectl starts in namespace " + labNamespace + ".")},
	}
	if lf.Metadata.Title == "" {
		lf.Metadata.Title = dirName
	}
	im.backend(idx.Backend.ImageID, lf)

	var drafts []*draft
	pending := &draft{setup: im.assets(idx.Details.Assets)}
	if in := idx.Details.Intro; in != nil {
		pending.instructions = append(pending.instructions, im.page("the intro", in, pending))
	}
	noVerify := !slices.ContainsFunc(idx.Details.Steps, func(p kcPage) bool { return p.Verify != "" })
	if noVerify {
		im.todo("the scenario has no verify script: write the checks of every step (each has a placeholder check that always fails)")
	}
	for i := range idx.Details.Steps {
		p := &idx.Details.Steps[i]
		what := fmt.Sprintf("step %d", i+1)
		title := oneLine(p.Title)
		if title == "" {
			title = fmt.Sprintf("Step %d", i+1)
		}
		text := im.page(what, p, pending)
		if len(pending.titles) > 0 || len(pending.instructions) > 0 {
			text = "## " + title + "\n\n" + text
		}
		pending.titles = append(pending.titles, title)
		pending.instructions = append(pending.instructions, text)
		if noVerify {
			// Nothing is verified: each page is a step whose checks the
			// author writes.
			pending.checks = []check{placeholderCheck}
			drafts = append(drafts, pending)
			pending = &draft{}
			continue
		}
		if p.Verify == "" {
			continue
		}
		script := im.readPart(what+"'s verify script", p.Verify)
		if strings.TrimSpace(script) == "" {
			continue
		}
		im.scripts = append(im.scripts, script)
		vm := mapVerify(script, labNamespace)
		if len(vm.checks) == 0 {
			continue
		}
		pending.checks, pending.typed, pending.verified = vm.checks, vm.typed, true
		for _, ns := range vm.namespaces {
			im.namespace(ns, lf)
		}
		if !vm.typed {
			im.todo("%s (%q): its verify script runs as a command check in the sandbox, where the learner can fake it; rewrite it as kube, file or audit checks", what, title)
		}
		drafts = append(drafts, pending)
		pending = &draft{}
	}
	if f := idx.Details.Finish; f != nil {
		finish := &draft{}
		if text := im.page("the finish page", f, finish); text != "" {
			pending.instructions = append(pending.instructions, "---\n\n"+text)
		}
		if len(finish.setup) > 0 {
			im.todo("the finish page's scripts were not imported (labctl has no page after the last step)")
		}
	}
	switch {
	case len(drafts) == 0:
		// Verify scripts that check nothing: one step, whose checks the author writes.
		pending.checks = []check{placeholderCheck}
		im.todo("the scenario's verify scripts check nothing: write the checks of its step (it has a placeholder check that always fails)")
		drafts = append(drafts, pending)
	case len(pending.instructions) > 0 || len(pending.solve) > 0:
		last := drafts[len(drafts)-1]
		last.instructions = append(last.instructions, pending.instructions...)
		last.hints = append(last.hints, pending.hints...)
		if len(pending.solve) > 0 {
			im.todo("the pages after the last verified step (%s) became part of it: move their commands out of its solve if its checks should not need them", strings.Join(pending.titles, ", "))
			last.solve = append(last.solve, pending.solve...)
		}
	}

	ids := map[string]bool{}
	for i, d := range drafts {
		title := d.titles[len(d.titles)-1]
		id := slug(title, 40)
		if id == "" || ids[id] {
			id = fmt.Sprintf("step-%d", i+1)
		}
		ids[id] = true
		st := stepFile{
			ID:           id,
			Title:        title,
			Instructions: strings.Join(d.instructions, "\n\n"),
			Setup:        strings.Join(d.setup, "\n"),
			Hints:        d.hints,
			Checks:       d.checks,
			Solve:        strings.Join(d.solve, "\n"),
		}
		if strings.TrimSpace(st.Instructions) == "" {
			st.Instructions = title
		}
		if d.solved {
			im.result.Solved++
		} else {
			st.Solve = "# The scenario shows no solution for this step: write what a correct learner runs.\nexit 1"
			im.todo("step %q: write its solve (the scenario shows no solution and no command to run)", title)
		}
		im.result.Steps++
		im.result.Checks += len(d.checks)
		if d.typed {
			im.result.Typed += len(d.checks)
		}
		lf.Steps = append(lf.Steps, st)
	}
	if slices.ContainsFunc(lf.Steps, func(s stepFile) bool { return s.Setup != "" }) {
		im.todo("setup scripts run in the sandbox as root with the learner's kubectl, not on a node with the cluster's admin as Killercoda's background scripts did: move what they do to nodes or cluster-wide objects into the lab's cluster settings")
	}
	im.scan(lf)
	return lf, nil
}

// page maps a text of the scenario and gathers its scripts, hints and
// solution into d; it returns the text.
func (im *kcImport) page(what string, p *kcPage, d *draft) string {
	pg := mapPage(im.readPart(what+"'s text", p.Text))
	for _, t := range pg.todo {
		im.todo("%s: %s", what, t)
	}
	for _, part := range []struct{ name, file string }{{"background", p.Background}, {"courseData", p.CourseData}, {"foreground", p.Foreground}} {
		if script := strings.TrimSpace(im.readPart(what+"'s "+part.name+" script", part.file)); script != "" {
			d.setup = append(d.setup, "# "+what+": "+part.name+" script\n"+script)
			im.scripts = append(im.scripts, script)
		}
	}
	d.hints = append(d.hints, pg.hints...)
	switch {
	case len(pg.solution) > 0:
		d.solve = append(d.solve, pg.solution...)
		d.solved = true
	case len(pg.execs) > 0:
		d.solve = append(d.solve, pg.execs...)
		d.solved = true
	}
	im.scripts = append(im.scripts, pg.solution...)
	im.scripts = append(im.scripts, pg.execs...)
	return pg.text
}

// backend maps the machine the scenario ran on.
func (im *kcImport) backend(id string, lf *labFile) {
	lf.Cluster.Namespaces = []string{labNamespace}
	switch {
	case strings.Contains(id, "2nodes"):
		lf.Cluster.Workers = []struct{}{{}}
	case !strings.Contains(id, "kubernetes"):
		im.todo("the scenario ran on a machine without Kubernetes (%q); labctl gives every lab a cluster, and the sandbox is Debian, not that image: check that the tools it uses are in the sandbox", id)
	}
}

// namespace adds a namespace the scenario uses to the lab's.
func (im *kcImport) namespace(ns string, lf *labFile) {
	if ns == "" || slices.Contains(lf.Cluster.Namespaces, ns) {
		return
	}
	if lab.ReservedNamespace(ns) != "" {
		im.todo("the scenario uses namespace %s, which a lab cannot own: move that work into a namespace of the lab", ns)
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
func (im *kcImport) scan(lf *labFile) {
	all := strings.Join(im.scripts, "\n")
	for _, m := range nsFlagRE.FindAllStringSubmatch(all, -1) {
		im.namespace(m[1], lf)
	}
	for _, m := range createNSRE.FindAllStringSubmatch(all, -1) {
		im.todo("the scenario creates namespace %s; labctl creates the lab's namespaces at up and the learner cannot create others: drop that command from the step and its solve", m[1])
	}
	if m := clusterRE.FindString(all); m != "" {
		im.todo("the scenario works on the cluster as a whole (%s); the learner is admin of the lab's namespaces only: grant what the step needs in access.clusterRules, or change the step", strings.Join(strings.Fields(m), " "))
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
		im.todo("the scenario reaches the internet (%s), which a lab's sandbox cannot: put what it fetches in fixtures/ or an image", strings.Join(slices.Compact(m), ", "))
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
