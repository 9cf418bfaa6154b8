package importer

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// iqTrack is an Instruqt track's track.yml: the fields an import reads.
type iqTrack struct {
	Title       string `yaml:"title"`
	Teaser      string `yaml:"teaser"`
	Description string `yaml:"description"`
	// Challenges are listed here in older tracks, each with its
	// assignment; newer ones keep each in a directory of its own.
	Challenges []iqChallenge `yaml:"challenges"`
}

// iqChallenge is a challenge's front matter (assignment.md) or its entry
// in an older track.yml.
type iqChallenge struct {
	Slug       string `yaml:"slug"`
	Title      string `yaml:"title"`
	Teaser     string `yaml:"teaser"`
	Assignment string `yaml:"assignment"`
	Notes      []struct {
		Type     string `yaml:"type"`
		Contents string `yaml:"contents"`
	} `yaml:"notes"`
}

// iqConfig is config.yml: the machines the track ran on.
type iqConfig struct {
	VirtualMachines []iqHost `yaml:"virtualmachines"`
	Containers      []iqHost `yaml:"containers"`
}

type iqHost struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
}

// iqScriptRE names a challenge's scripts: KIND-HOST.
var iqScriptRE = lazyRegexp(`^(setup|check|solve|cleanup)-([A-Za-z0-9_.-]+)$`)

// Instruqt imports the Instruqt track in src (track.yml, config.yml, its
// challenges' assignment.md and setup, check and solve scripts, the
// track's setup scripts) as a lab in out, which must not exist or be empty.
func Instruqt(src, out string) (*Result, error) {
	return InstruqtWith(src, out, Options{})
}

// InstruqtWith is Instruqt with options.
func InstruqtWith(src, out string, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	s, err := openSource(src)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	raw, err := s.read("track.yml")
	if err != nil {
		return nil, fmt.Errorf("%w (an Instruqt track's directory holds track.yml)", err)
	}
	var tr iqTrack
	if err := yaml.Unmarshal([]byte(raw), &tr); err != nil {
		return nil, fmt.Errorf("track.yml: %v", err)
	}
	im := &importer{src: s, opts: o, result: &Result{Dir: out, From: "an Instruqt track"}, fixtures: map[string][]byte{}}
	lf := im.newLab(filepath.Base(filepath.Clean(src)), tr.Title, strings.TrimSpace(tr.Teaser+"\n\n"+tr.Description))
	im.iqHosts()
	steps, err := im.iqChallenges(&tr)
	if err != nil {
		return nil, err
	}
	im.build(lf, im.iqScripts("track_scripts", "the track"), nil, steps, nil)
	if s.over != nil {
		return nil, s.over
	}
	if err := write(out, lf, im.fixtures, im.result); err != nil {
		return nil, err
	}
	return im.result, nil
}

// iqHosts reads config.yml: a track on more than one machine, or on one
// without Kubernetes, is said in the to-do list.
func (im *importer) iqHosts() {
	if !im.src.exists("config.yml") {
		return
	}
	raw := im.readPart("config.yml", "config.yml")
	var cfg iqConfig
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		im.todo("config.yml was not read: %v", err)
		return
	}
	hosts := append(cfg.VirtualMachines, cfg.Containers...)
	if len(hosts) > 1 {
		var names []string
		for _, h := range hosts {
			names = append(names, h.Name)
		}
		im.todo("the track ran on %d machines (%s); a lab has one sandbox and one cluster: the scripts of every machine were joined, say which belong where", len(hosts), strings.Join(names, ", "))
	}
	kube := regexp.MustCompile(`(?i)k3s|k8s|kube|kind|minikube|gke|eks|aks|openshift|crc`)
	if !slices.ContainsFunc(hosts, func(h iqHost) bool { return kube.MatchString(h.Image + " " + h.Name) }) && len(hosts) > 0 {
		im.todo("the track's machines (%s) do not look like Kubernetes; labctl gives every lab a cluster, and the sandbox is Debian: check that the tools it uses are in the sandbox", hosts[0].Image)
	}
}

// iqChallenges reads the challenges in their order: the directories
// holding assignment.md, by name (01-…, 02-…), or, for an older track,
// track.yml's list, whose scripts are in directories named by slug.
func (im *importer) iqChallenges(tr *iqTrack) ([]part, error) {
	entries, err := fs.ReadDir(im.src.root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("reading the track: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && im.src.exists(path.Join(e.Name(), "assignment.md")) {
			dirs = append(dirs, e.Name())
		}
	}
	slices.Sort(dirs)
	var parts []part
	if len(dirs) > 0 {
		for i, d := range dirs {
			what := fmt.Sprintf("challenge %d (%s)", i+1, d)
			text := im.readPart(what+"'s assignment", path.Join(d, "assignment.md"))
			front, body := frontMatter(text)
			var ch iqChallenge
			if err := yaml.Unmarshal([]byte(front), &ch); err != nil {
				im.todo("%s: its front matter was not read: %v", what, err)
			}
			ch.Assignment = body
			parts = append(parts, im.iqPart(what, d, &ch))
		}
		return parts, nil
	}
	if len(tr.Challenges) == 0 {
		return nil, fmt.Errorf("the track has no challenges: no directory holds assignment.md and track.yml lists none")
	}
	for i := range tr.Challenges {
		ch := &tr.Challenges[i]
		dir := ch.Slug
		for _, e := range entries {
			if e.IsDir() && (e.Name() == ch.Slug || strings.HasSuffix(e.Name(), "-"+ch.Slug)) {
				dir = e.Name()
			}
		}
		parts = append(parts, im.iqPart(fmt.Sprintf("challenge %d (%s)", i+1, ch.Slug), dir, ch))
	}
	return parts, nil
}

// iqPart is one challenge: its notes and assignment as the text, its
// scripts from its directory.
func (im *importer) iqPart(what, dir string, ch *iqChallenge) part {
	var text []string
	for _, n := range ch.Notes {
		if n.Type == "text" && strings.TrimSpace(n.Contents) != "" {
			text = append(text, strings.TrimSpace(n.Contents))
		}
	}
	if t := strings.TrimSpace(ch.Teaser); t != "" && strings.TrimSpace(ch.Assignment) == "" {
		text = append(text, t)
	}
	text = append(text, strings.TrimSpace(ch.Assignment))
	p := part{what: what, title: oneLine(ch.Title), text: strings.Join(text, "\n\n"), fencesRun: true}
	p.setup = im.iqScripts(dir, what)
	if check := im.iqScript(dir, "check", what); check != "" {
		p.verify, p.hasVerify = check, true
	}
	p.solve = im.iqScript(dir, "solve", what)
	return p
}

// bootstrapWaitRE is the loop an Instruqt setup script starts with, waiting
// for the platform's host bootstrap: a file no lab has.
var bootstrapWaitRE = lazyRegexp(`(?s)\b(?:until|while)\b[^\n]*/opt/instruqt/bootstrap/host-bootstrap-completed[^\n]*?(?:;[ \t]*|\n[ \t]*)do\b.*?\bdone\b`)

// proxyWaitRE is a loop waiting for the API server through Instruqt's
// kubectl proxy (curl http://localhost:8001/api).
var proxyWaitRE = lazyRegexp(`(?s)\b(?:until|while)\b[^\n]*\bcurl\b[^\n]*localhost:8001/api\b[^\n]*?(?:;[ \t]*|\n[ \t]*)do\b.*?\bdone\b`)

// iqScripts are the setup scripts in dir, labelled.
func (im *importer) iqScripts(dir, what string) []string {
	if s := strings.TrimSpace(im.iqScript(dir, "setup", what)); s != "" {
		if bootstrapWaitRE.MatchString(s) {
			s = bootstrapWaitRE.ReplaceAllString(s, ": labctl runs setup once the sandbox is ready: no Instruqt bootstrap to wait for")
			im.todo("%s: its setup script waited for Instruqt's host bootstrap (/opt/instruqt/bootstrap/host-bootstrap-completed), which never comes in a lab: the loop became a no-op (:)", what)
		}
		if proxyWaitRE.MatchString(s) {
			s = proxyWaitRE.ReplaceAllString(s, ": labctl runs setup once the API server answers: no kubectl proxy to wait for")
			im.todo("%s: its setup script waited for the API server through a kubectl proxy on localhost:8001, which no lab runs: the loop became a no-op (:); the learner's kubectl reaches the API server itself", what)
		}
		return []string{"# " + what + ": setup script\n" + s}
	}
	return nil
}

// iqScript joins dir's scripts of one kind, one per machine, in name
// order; cleanup scripts are said, not imported.
func (im *importer) iqScript(dir, kind, what string) string {
	entries, err := fs.ReadDir(im.src.root.FS(), dir)
	if err != nil {
		return ""
	}
	var scripts []string
	for _, e := range entries {
		m := iqScriptRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		if m[1] == "cleanup" && kind == "setup" {
			im.todo("%s: its cleanup script %s was not imported (labctl resets a lab itself)", what, e.Name())
		}
		if m[1] != kind {
			continue
		}
		if s := strings.TrimSpace(im.readPart(what+"'s "+e.Name(), path.Join(dir, e.Name()))); s != "" {
			scripts = append(scripts, s)
		}
	}
	return strings.Join(scripts, "\n")
}

// frontMatter splits a Markdown file's YAML front matter (between ---
// lines at its start) from its body.
func frontMatter(text string) (front, body string) {
	if !strings.HasPrefix(text, "---\n") {
		return "", text
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return "", text
	}
	body = rest[end+4:]
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	return rest[:end], body
}
