package importer

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/labctl/labctl/lab"
)

// importer is one import: the source it reads and what it gathers.
type importer struct {
	src      *source
	opts     Options
	result   *Result
	fixtures map[string][]byte
	// scripts are every script and command of the source, scanned for
	// namespaces, images and the internet.
	scripts []string
}

// part is one page of the source, read: its text, the scripts run before
// it, and what verifies and solves it.
type part struct {
	what, title string
	// text is the page's Markdown, not yet mapped.
	text string
	// setup are the scripts run before the page, each labelled.
	setup []string
	// verify is the script that says the page is done; hasVerify says
	// the source names one (an empty one verifies nothing).
	verify    string
	hasVerify bool
	// solve is the platform's own solve script, if it has one.
	solve string
	// fencesRun says the platform has no run actions: the text's shell
	// code blocks are the commands a learner runs.
	fencesRun bool
}

// draft is a step being built; pages without a verify script join the
// next page that has one.
type draft struct {
	titles       []string
	instructions []string
	setup        []string
	hints        []string
	solution     []string
	solve        []string
	solved       bool
	checks       []check
}

// placeholderCheck stands for the checks of a step the source does not
// verify: it always fails, so labctl test says what is missing.
var placeholderCheck = check{
	Name:        "write-this-check",
	Description: "the source verifies nothing here; write the checks that prove this step",
	Command:     &commandCheck{Run: []string{"false"}},
}

func (im *importer) todo(format string, args ...any) {
	t := fmt.Sprintf(format, args...)
	if !slices.Contains(im.result.Todo, t) {
		im.result.Todo = append(im.result.Todo, t)
	}
}

// readPart reads a file the source names, or records that it could not.
func (im *importer) readPart(what, name string) string {
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

// Options change what an import writes.
type Options struct {
	// Name is the lab's metadata.name; "" names it after the source's
	// directory.
	Name string
}

// labNameRE is a lab's name: a DNS label of at most 40 characters.
var labNameRE = lazyRegexp(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// check says what is wrong with the options, naming the fix.
func (o Options) check() error {
	if o.Name != "" && !labNameRE.MatchString(o.Name) {
		return fmt.Errorf("--name %q is not a lab name: use at most 40 lower-case letters, digits and '-', starting and ending with a letter or digit", o.Name)
	}
	return nil
}

// newLab starts the lab: its name from the source directory's (or the
// one asked for), its title and goal from the source's.
func (im *importer) newLab(dirName, title, description string) *labFile {
	name := slug(dirName, 40)
	if im.opts.Name != "" {
		name = im.opts.Name
	}
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = slug("imported-"+name, 40)
	}
	lf := &labFile{
		APIVersion: lab.APIVersion,
		Kind:       lab.Kind,
		Metadata: metadata{Name: name, Title: oneLine(title),
			Goal: strings.TrimSpace(strings.TrimSpace(description) + "\n\nYour kubectl starts in namespace " + labNamespace + ".")},
		Cluster: cluster{Namespaces: []string{labNamespace}},
	}
	if lf.Metadata.Title == "" {
		lf.Metadata.Title = dirName
	}
	return lf
}

// build makes the lab's steps from the source's pages: each page with a
// verify script is a step, and the pages before it (the intro first)
// join it under their titles; pages after the last one join the last. A
// source that verifies nothing keeps each page as a step whose check the
// author writes.
func (im *importer) build(lf *labFile, setup []string, intro *part, steps []part, finish *part) {
	var drafts []*draft
	pending := &draft{setup: setup}
	im.scripts = append(im.scripts, setup...)
	if intro != nil {
		pending.instructions = append(pending.instructions, im.page(intro, pending))
	}
	noVerify := !slices.ContainsFunc(steps, func(p part) bool { return p.hasVerify })
	if noVerify {
		im.todo("the source has no verify script: write the checks of every step (each has a placeholder check that always fails), or have `labctl test --draft` draft them from what each step's solve makes, and read them")
	}
	for i := range steps {
		p := &steps[i]
		title := p.title
		if title == "" {
			title = fmt.Sprintf("Step %d", i+1)
		}
		text := im.page(p, pending)
		if len(pending.titles) > 0 || len(pending.instructions) > 0 {
			text = "## " + title + "\n\n" + text
		}
		pending.titles = append(pending.titles, title)
		pending.instructions = append(pending.instructions, text)
		if noVerify {
			pending.checks = []check{placeholderCheck}
			drafts = append(drafts, pending)
			pending = &draft{}
			continue
		}
		if strings.TrimSpace(p.verify) == "" {
			continue
		}
		im.scripts = append(im.scripts, p.verify)
		vm := mapVerify(p.verify, labNamespace)
		if len(vm.checks) == 0 {
			continue
		}
		pending.checks = vm.checks
		for _, ns := range vm.namespaces {
			im.namespace(ns, lf)
		}
		typed := slices.ContainsFunc(vm.checks, func(c check) bool { return c.Command == nil })
		if len(vm.notes) > 0 && (typed || len(vm.notes) > 1) {
			im.todo("%s (%q): its verify script, read line by line: %s", p.what, title, strings.Join(vm.notes, "; "))
		}
		switch {
		case !vm.typed && typed:
			im.todo("%s (%q): the rest of its verify script stays a command check: the grader runs it, but with the learner's files and kubeconfig (/root), which the learner can change to fake it; rewrite it as kube, file or audit checks", p.what, title)
		case !vm.typed:
			im.todo("%s (%q): its verify script stays one command check: the grader runs it, but with the learner's files and kubeconfig (/root), which the learner can change to fake it; rewrite it as kube, file or audit checks", p.what, title)
		}
		if !vm.typed {
			_, logs := logsOutsideHome(p.verify)
			if len(logs) > 0 {
				im.todo("%s (%q): its verify script writes its output to %s, outside the learner's home, where the grader cannot write (the redirection would fail and skip what it applies to): the check writes that output to its standard error instead", p.what, title, strings.Join(logs, ", "))
			}
			outside := slices.DeleteFunc(pathsOutsideHome(p.verify), func(f string) bool { return slices.Contains(logs, f) })
			if len(outside) > 0 {
				im.todo("%s (%q): its verify script reads %s, outside the learner's home: the command check runs in the grader, whose files there are its own, not the sandbox's; "+
					"rewrite those lines as file checks, which read any path of the sandbox (with labctl up; a class's grader reads only /root and the fixtures)", p.what, title, strings.Join(outside, ", "))
			}
		}
		drafts = append(drafts, pending)
		pending = &draft{}
	}
	if finish != nil {
		fd := &draft{}
		if text := im.page(finish, fd); text != "" {
			pending.instructions = append(pending.instructions, "---\n\n"+text)
		}
		if len(fd.setup) > 0 {
			im.todo("the finish page's scripts were not imported (labctl has no page after the last step)")
		}
	}
	switch {
	case len(drafts) == 0:
		// Verify scripts that check nothing: one step, whose checks the author writes.
		pending.checks = []check{placeholderCheck}
		im.todo("the source's verify scripts check nothing: write the checks of its step (it has a placeholder check that always fails)")
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
	im.steps(lf, drafts)
	im.undone(lf)
	if slices.ContainsFunc(lf.Steps, func(s stepFile) bool { return s.Setup != "" }) {
		im.todo("setup scripts run in the sandbox as root with the learner's kubectl, not on a node with the cluster's admin as the platform's setup scripts did: move what they do to nodes or cluster-wide objects into the lab's cluster settings")
	}
	im.scan(lf)
	im.markDraft(lf)
}

// undone says which steps require gone, or other, what an earlier step's
// checks require: the lab cannot then grade 100 % at its end, which
// labctl test asks of it.
func (im *importer) undone(lf *labFile) {
	type object struct{ kind, ns, name string }
	type field struct {
		object
		path string
	}
	required := map[object]string{}
	values := map[field]any{}
	valueStep := map[field]string{}
	for _, st := range lf.Steps {
		for _, c := range st.Checks {
			k := c.Kube
			if k == nil {
				continue
			}
			o := object{k.Kind, k.Namespace, k.Name}
			if f := k.Field; f != nil && f.Equals != nil {
				key := field{o, f.Path}
				if v, ok := values[key]; ok && v != f.Equals {
					im.todo("step %q requires %s %s's %s to be %v, and step %q's checks require %v: the lab cannot grade 100 %% at its end, as labctl test asks; keep one of them, or check the earlier step otherwise", st.Title, k.Kind, k.Name, f.Path, f.Equals, valueStep[key], v)
				}
				values[key], valueStep[key] = f.Equals, st.Title
			}
			if k.Exists != nil && !*k.Exists {
				if earlier, ok := required[o]; ok {
					im.todo("step %q requires %s %s gone, which step %q's checks require: the lab cannot grade 100 %% at its end, as labctl test asks; drop the step that undoes the work (or keep it as text), or check the earlier step otherwise", st.Title, k.Kind, k.Name, earlier)
					delete(required, o)
				}
				continue
			}
			if _, ok := required[o]; !ok {
				required[o] = st.Title
			}
		}
	}
}

// markDraft marks the lab a draft while a step's checks are all
// placeholders or its solve only fails: labctl lint refuses such a lab
// unless it says it is one.
func (im *importer) markDraft(lf *labFile) {
	for _, st := range lf.Steps {
		placeholders := !slices.ContainsFunc(st.Checks, func(c check) bool {
			return c.Command == nil || !lab.PlaceholderCheck(lab.Check{Command: &lab.CommandCheck{Run: c.Command.Run}})
		})
		if placeholders || lab.PlaceholderScript(st.Solve) {
			lf.Metadata.Draft = true
		}
	}
	if lf.Metadata.Draft {
		im.todo("the lab is marked a draft (metadata.draft: true) while placeholder checks or solves remain: labctl lint warns of them instead of refusing the lab; remove the mark when every step has real checks and a solve")
	}
}

// steps writes the drafts as the lab's steps.
func (im *importer) steps(lf *labFile, drafts []*draft) {
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
			Solution:     strings.Join(d.solution, "\n\n"),
			Checks:       d.checks,
			Solve:        strings.Join(d.solve, "\n"),
		}
		if strings.TrimSpace(st.Instructions) == "" {
			st.Instructions = title
		}
		if kAliasRE.MatchString(st.Solve) {
			// Scenarios alias kubectl as k; a script sees no aliases.
			st.Solve = "k() { kubectl \"$@\"; }\n" + st.Solve
		}
		if d.solved {
			im.result.Solved++
		} else {
			st.Solve = "# The source shows no solution for this step: write what a correct learner runs.\nexit 1"
			im.todo("step %q: write its solve (the source shows no solution and no command to run)", title)
		}
		im.result.Steps++
		im.result.Checks += len(d.checks)
		for _, c := range d.checks {
			if c.Command == nil {
				im.result.Typed++
			}
		}
		lf.Steps = append(lf.Steps, st)
	}
}

// page maps a page's text and gathers its scripts, hints and solution
// into d; it returns the text. The platform's own solve script comes
// first, then a solution block, then the commands the learner was to run.
func (im *importer) page(p *part, d *draft) string {
	pg := mapPage(p.text)
	for _, t := range pg.todo {
		im.todo("%s: %s", p.what, t)
	}
	d.setup = append(d.setup, p.setup...)
	im.scripts = append(im.scripts, p.setup...)
	d.hints = append(d.hints, pg.hints...)
	d.solution = append(d.solution, pg.solutionText...)
	switch {
	case strings.TrimSpace(p.solve) != "":
		d.solve = append(d.solve, strings.TrimSpace(p.solve))
		d.solved = true
	case len(pg.solution) > 0:
		d.solve = append(d.solve, pg.solution...)
		d.solved = true
	case len(pg.execs) > 0:
		d.solve = append(d.solve, pg.execs...)
		d.solved = true
	case p.fencesRun && len(pg.fences) > 0:
		d.solve = append(d.solve, pg.fences...)
		d.solved = true
		im.todo("%s: its solve is the text's shell code blocks, in order; take out those that only show output", p.what)
	}
	im.scripts = append(im.scripts, p.solve)
	im.scripts = append(im.scripts, pg.solution...)
	im.scripts = append(im.scripts, pg.execs...)
	return pg.text
}

// namespace adds a namespace the source uses to the lab's.
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
	kAliasRE   = lazyRegexp(`(?m)^\s*k\s`)
	dnsLabelRE = lazyRegexp(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	clusterRE  = lazyRegexp(`kubectl\s+(?:(?:get|describe)\s+(?:nodes?|no)\b|taint\b|cordon\b|drain\b|uncordon\b|label\s+(?:nodes?|no)\b|create\s+clusterrole|apply\s+.*crd)`)
	// clusterKindRE is a manifest of a cluster-wide object.
	clusterKindRE    = lazyRegexp(`(?m)^\s*kind:\s*["']?(PersistentVolume|StorageClass|ClusterRole|ClusterRoleBinding|CustomResourceDefinition|PriorityClass|IngressClass)["']?\s*$`)
	setImageRE       = lazyRegexp(`\b(?:kubectl|k)\s+set\s+image\s[^\n;&|]*`)
	containerImageRE = lazyRegexp(`\s[A-Za-z0-9_*-]+=([^\s'"=]+)`)
	imageFlagRE      = lazyRegexp(`--image[= ]([^\s'"]+)|\bimage:\s*['"]?([^\s'"]+)`)
	internetRE       = lazyRegexp(`\b(curl|wget|apt(?:-get)?\s+install|pip3?\s+install|helm\s+repo\s+add|git\s+clone|go\s+install|npm\s+install)\b`)
	tagRE2           = lazyRegexp(`^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9._-]+$`)
	// nodesLoopRE is a loop (or a wait) on the cluster's nodes.
	nodesLoopRE     = lazyRegexp(`\b(?:until|while)\b[^\n]*\b(?:kubectl|k)\s+get\s+(?:nodes?|no)\b[^\n;]*|\bkubectl\s+wait\b[^\n]*\b(?:nodes?|no)\b[^\n;]*`)
	allNamespacesRE = lazyRegexp(`\b(?:kubectl|k)\s[^\n|;&]*?(?:\s-A\b|--all-namespaces\b)`)
	sshRE           = lazyRegexp(`(?m)(?:^|[\s;&|(])(?:ssh|scp)\s+[^\n]*`)
	systemctlRE     = lazyRegexp(`\bsystemctl\s+[a-z-]+[^\n;&|]*`)
	dockerRE        = lazyRegexp(`(?m)(?:^|[\s;&|(])(?:docker|podman|crictl|nerdctl)\s+[a-z][^\n;&|]*`)
	helmRE          = lazyRegexp(`(?m)(?:^|[\s;&|(])helm\s+[a-z][^\n;&|]*`)
)

// scan reads every script and command of the source, and the manifests
// among its assets, for what a labctl lab must declare or cannot do:
// namespaces, images, cluster-wide work, the internet, the machine the
// source ran on; then it rewrites the lab's scripts to match (see rewrite).
func (im *importer) scan(lf *labFile) {
	all := strings.Join(im.scripts, "\n")
	manifests := im.manifests()
	u := scanNamespaces(all, slices.Collect(maps.Values(manifests)))
	for _, list := range [][]string{u.named, u.created, u.manifests} {
		for _, ns := range list {
			im.namespace(ns, lf)
		}
	}
	if u.viaDefault {
		im.todo("the source works in namespace default, which a lab cannot own: its scripts now name the lab's namespace, %s, instead (the learner's kubectl starts there); say so in the text where it names default", labNamespace)
	}
	if len(u.created) > 0 {
		im.todo("the source creates namespace %s; labctl creates the lab's namespaces at up (they are declared in cluster.namespaces) and the learner cannot create others: its kubectl create namespace commands became no-ops (:) and the Namespace objects were taken out of what setup applies; say so in the text", strings.Join(u.created, ", "))
	}
	im.addons(lf, all, manifests)
	if m := clusterRE.FindString(all); m != "" {
		im.todo("the source works on the cluster as a whole (%s); the learner is admin of the lab's namespaces only: grant what the step needs in access.clusterRules, or change the step", strings.Join(strings.Fields(m), " "))
	}
	if m := clusterKindRE.FindStringSubmatch(strings.Join(append([]string{all}, slices.Collect(maps.Values(manifests))...), "\n")); m != nil {
		im.todo("the source creates a cluster-wide %s; the learner is admin of the lab's namespaces only: grant it in access.clusterRules (a hostPath PersistentVolume reaches the node's disk: prefer a claim the storage add-on binds), or change the step", m[1])
	}
	if m := nodesLoopRE.FindString(all); m != "" {
		im.todo("a script waits for the cluster's nodes (%s): labctl's cluster is ready before setup runs, and the learner may not read nodes, so it would wait forever: drop that loop", strings.Join(strings.Fields(m), " "))
	}
	if m := allNamespacesRE.FindString(all); m != "" {
		im.todo("a command lists across all namespaces (%s): the learner may read only the lab's namespaces, so it fails: name the namespace (-n) instead", strings.Join(strings.Fields(m), " "))
	}
	for _, t := range []struct {
		re  *lazyRE
		why string
	}{
		{sshRE, "ssh to another machine; a lab has one sandbox and no other machine to reach: do that work in the sandbox or the cluster"},
		{systemctlRE, "systemctl; the sandbox runs no service manager: start what it needs in setup as a plain process, or in the cluster"},
		{dockerRE, "docker (or another container engine); the sandbox has none: run containers as Pods, and list the images in cluster.images"},
		{helmRE, "helm; the sandbox has helm v4, but no chart repository answers: put the chart in the lab's fixtures and install it from there"},
	} {
		if m := t.re.FindString(all); m != "" {
			im.todo("the source runs %s (%s)", t.why, strings.TrimSpace(m))
		}
	}
	seen := map[string]bool{}
	scanImages := func(text, where string) {
		var refs []string
		for _, m := range imageFlagRE.FindAllStringSubmatch(text, -1) {
			refs = append(refs, m[1]+m[2])
		}
		// kubectl set image deploy/web web=nginx:1.27 app=…
		for _, cmd := range setImageRE.FindAllString(text, -1) {
			for _, m := range containerImageRE.FindAllStringSubmatch(cmd, -1) {
				refs = append(refs, m[1])
			}
		}
		for _, ref := range refs {
			if seen[ref] || strings.ContainsAny(ref, "${}") {
				continue
			}
			seen[ref] = true
			if tagRE2.MatchString(ref) && !strings.HasSuffix(ref, ":latest") {
				lf.Cluster.Images = append(lf.Cluster.Images, image{Name: ref})
				im.todo("image %s%s: no registry answers in a lab; build it (cluster.images[].build) or have it in the host's Docker engine before labctl up", ref, where)
			} else {
				im.todo("image %s%s has no fixed tag: pin one and list it in cluster.images (labctl loads images, it never pulls them)", ref, where)
			}
		}
	}
	scanImages(all, "")
	for _, name := range slices.Sorted(maps.Keys(manifests)) {
		scanImages(manifests[name], " (named in "+name+")")
	}
	// The scripts among the assets run too (a background script runs
	// /ks/init.sh): what they fetch counts.
	fetching := all
	for _, name := range slices.Sorted(maps.Keys(im.fixtures)) {
		if b := im.fixtures[name]; strings.HasSuffix(name, ".sh") || bytes.HasPrefix(b, []byte("#!")) {
			fetching += "\n" + string(b)
		}
	}
	if m := internetRE.FindAllString(fetching, -1); len(m) > 0 {
		slices.Sort(m)
		im.todo("the source reaches the internet (%s), which a lab's sandbox cannot: put what it fetches in fixtures/ or an image", strings.Join(slices.Compact(m), ", "))
	}
	im.rewrite(lf, shellVars(all))
}

// addonUses are what in a script or manifest needs an add-on: a kind it
// applies or reads, a command.
var addonUses = []struct {
	addon, what string
	re          *lazyRE
}{
	{lab.AddonNetworkPolicy, "NetworkPolicy objects (enforced only with it)",
		lazyRegexp(`(?m)^\s*kind:\s*["']?NetworkPolicy\b|\b(?:kubectl|k)\s[^\n|;&]*\b(?:networkpolic(?:y|ies)|netpol)\b`)},
	{lab.AddonIngress, "Ingress objects (served, with an address, only with it)",
		lazyRegexp(`(?m)^\s*kind:\s*["']?Ingress\b|\b(?:kubectl|k)\s[^\n|;&]*\b(?:ingress(?:es)?|ing)\b`)},
	{lab.AddonStorage, "PersistentVolumeClaims (bound by a default StorageClass only with it)",
		lazyRegexp(`(?m)^\s*kind:\s*["']?PersistentVolumeClaim\b|^\s*volumeClaimTemplates:|\b(?:kubectl|k)\s[^\n|;&]*\b(?:persistentvolumeclaims?|pvc)\b`)},
	{lab.AddonMetrics, "kubectl top or a HorizontalPodAutoscaler (metrics-server)",
		lazyRegexp(`(?m)\b(?:kubectl|k)\s+top\b|^\s*kind:\s*["']?HorizontalPodAutoscaler\b|\b(?:kubectl|k)\s+autoscale\b|\b(?:kubectl|k)\s[^\n|;&]*\b(?:horizontalpodautoscalers?|hpa)\b`)},
}

// addons turns on the add-ons the source's scripts and manifests use.
func (im *importer) addons(lf *labFile, scripts string, manifests map[string]string) {
	texts := append([]string{scripts}, slices.Collect(maps.Values(manifests))...)
	for _, u := range addonUses {
		if slices.Contains(lf.Cluster.Addons, u.addon) {
			continue
		}
		for _, t := range texts {
			if u.re.MatchString(t) {
				lf.Cluster.Addons = append(lf.Cluster.Addons, u.addon)
				im.todo("the source uses %s: the lab asks for the %s add-on (cluster.addons)", u.what, u.addon)
				break
			}
		}
	}
}

// manifests are the scenario's YAML assets, by their fixture name.
func (im *importer) manifests() map[string]string {
	out := map[string]string{}
	for name, b := range im.fixtures {
		if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			out[name] = string(b)
		}
	}
	return out
}

// rewrite fits the lab's scripts to labctl's sandbox: no sudo, the lab's
// namespace for default, no creating the namespaces labctl creates, no
// Namespace object of the lab's in what setup and the solves apply.
func (im *importer) rewrite(lf *labFile, vars map[string][]string) {
	declared := lf.Cluster.Namespaces
	var sudo bool
	fix := func(s string) string {
		s, had := stripSudo(s)
		sudo = sudo || had
		s = mapDefault(s)
		s = dropCreateNamespace(s, declared, vars)
		return mapHeredocs(s, func(body string) string {
			out, _ := withoutNamespaces(body, declared)
			return out
		})
	}
	for i := range lf.Steps {
		st := &lf.Steps[i]
		st.Setup, st.Solve = fix(st.Setup), fix(st.Solve)
		for j := range st.Checks {
			if c := st.Checks[j].Command; c != nil && len(c.Run) == 3 && (c.Run[0] == "bash" || c.Run[0] == "sh") {
				c.Run[2] = fix(c.Run[2])
			}
		}
	}
	if sudo {
		im.todo("the source runs sudo, which the sandbox does not have (its learner is root): sudo was taken out of the scripts")
	}
	for _, name := range slices.Sorted(maps.Keys(im.manifests())) {
		out, dropped := withoutNamespaces(string(im.fixtures[name]), declared)
		if len(dropped) == 0 {
			continue
		}
		im.fixtures[name] = []byte(out)
		if strings.TrimSpace(stripComments(out)) == "" {
			im.todo("fixture %s held only the Namespace object(s) %s, which labctl creates: take its kubectl apply out of setup", name, strings.Join(dropped, ", "))
		} else {
			im.todo("fixture %s: its Namespace object(s) %s were taken out (labctl creates the lab's namespaces, and the learner's kubectl, which setup uses, may not change them)", name, strings.Join(dropped, ", "))
		}
	}
}

var commentLineRE = lazyRegexp(`(?m)^\s*#.*$`)

func stripComments(s string) string { return commentLineRE.ReplaceAllString(s, "") }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
