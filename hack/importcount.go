//go:build ignore

// importcount imports every Killercoda scenario (index.json) and Instruqt
// track (track.yml) under the directories it is given and counts what the
// importer made of them: labs imported, labs that lint, checks written,
// typed, command and placeholder checks, overall and for the Kubernetes
// sources that verify or solve something, and the reasons placeholders
// remain. A lab is runnable when nothing it needs is missing in a lab on
// this machine: the internet, another machine, a container engine, or an
// image from a registry (cluster.images without a build).
//
//	go run hack/importcount.go DIR... [-v]
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/importer"
	"github.com/labctl/labctl/usecase/labstore"
)

var (
	kubeImageRE  = regexp.MustCompile(`"imageid":\s*"kubernetes`)
	kubeConfigRE = regexp.MustCompile(`(?m)^\s*(?:gcp_projects|aws_accounts|azure_subscriptions)?\s*(?:kubernetes|k8s|gke|eks|aks|k3s)|image:\s*\S*(?:k3s|k8s|kubernetes|gke)|(?:^|\s)(?:- )?name:\s*(?:k8s|kubernetes)`)
)

type counts struct {
	sources, imported, lintOK, finished, runnable, checks, typed, command, placeholder int
}

func (c counts) row(name string) string {
	pct := func(n int) string {
		if c.checks == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(c.checks))
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %d (%s) | %d (%s) | %d (%s) |", name, c.sources, c.imported, c.lintOK, c.finished, c.runnable,
		c.checks, c.typed, pct(c.typed), c.command, pct(c.command), c.placeholder, pct(c.placeholder))
}

func main() {
	verbose := false
	var roots []string
	for _, a := range os.Args[1:] {
		if a == "-v" {
			verbose = true
			continue
		}
		roots = append(roots, a)
	}
	var all, kube, kubeVerified counts
	reasons := map[string]int{}
	blockedBy := map[string]int{}
	failures := map[string]int{}
	tmp, err := os.MkdirTemp("", "importcount-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			var fn func(src, out string) (*importer.Result, error)
			switch d.Name() {
			case "index.json":
				fn = importer.Killercoda
			case "track.yml":
				fn = importer.Instruqt
			default:
				return nil
			}
			src := filepath.Dir(p)
			raw, _ := os.ReadFile(p)
			// A Kubernetes source: a Killercoda backend image of Kubernetes,
			// an Instruqt track with a cluster (or a machine named for one).
			k8s := kubeImageRE.Match(raw)
			if cfg, err := os.ReadFile(filepath.Join(src, "config.yml")); err == nil && kubeConfigRE.Match(cfg) {
				k8s = true
			}
			verifies := strings.Contains(string(raw), `"verify"`) || hasCheckScript(src)
			n++
			all.sources++
			out := filepath.Join(tmp, fmt.Sprint(n))
			r, err := fn(src, out)
			if err != nil {
				failures[firstLine(err.Error())]++
				if verbose {
					fmt.Printf("%s: not imported: %v\n", src, err)
				}
				return nil
			}
			inKube := k8s && (verifies || r.Solved > 0)
			if inKube {
				kube.sources++
			}
			if k8s && verifies {
				kubeVerified.sources++
			}
			var c counts
			c.imported = 1
			_, l, err := labstore.Read(filepath.Join(out, "lab.yaml"))
			if err == nil && (l.Metadata.Draft || len(l.Unfinished()) == 0) {
				c.lintOK = 1
				if !l.Metadata.Draft {
					c.finished = 1
				}
			}
			var blocked []string
			for _, t := range r.Todo {
				for _, b := range blockers {
					if strings.Contains(t, b.todo) && !slices.Contains(blocked, b.name) {
						blocked = append(blocked, b.name)
					}
				}
			}
			if err == nil {
				for _, im := range l.Cluster.Images {
					if im.Build == "" && !slices.Contains(blocked, "an image from a registry") {
						blocked = append(blocked, "an image from a registry")
					}
				}
			}
			if len(blocked) == 0 {
				c.runnable = 1
			} else if inKube {
				for _, b := range blocked {
					blockedBy[b]++
				}
			}
			if err == nil {
				for _, st := range l.Steps {
					for _, ch := range st.Checks {
						c.checks++
						switch {
						case ch.Command == nil:
							c.typed++
						case lab.PlaceholderCheck(ch):
							c.placeholder++
						default:
							c.command++
						}
					}
				}
			}
			if c.placeholder > 0 {
				for _, t := range r.Todo {
					if strings.Contains(t, "placeholder") && !strings.Contains(t, "metadata.draft") {
						reasons[reason(t)] += 1
					}
				}
			}
			add(&all, c)
			if inKube {
				add(&kube, c)
			}
			if k8s && verifies {
				add(&kubeVerified, c)
			}
			if verbose {
				fmt.Printf("%s: k8s=%v verifies=%v checks=%d typed=%d command=%d placeholder=%d draft=%v blocked=%s\n", src, inKube, verifies, c.checks, c.typed, c.command, c.placeholder, err == nil && l.Metadata.Draft, strings.Join(blocked, ","))
			}
			os.RemoveAll(out)
			return nil
		})
	}
	fmt.Println("| sources | found | imported | lint ok | not draft | runnable | checks | typed | command | placeholder |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	fmt.Println(all.row("all"))
	fmt.Println(kube.row("Kubernetes, verified or solved"))
	fmt.Println(kubeVerified.row("Kubernetes, verified"))
	fmt.Println()
	for _, m := range sorted(blockedBy) {
		fmt.Printf("not runnable (Kubernetes labs): %d  needs %s\n", blockedBy[m], m)
	}
	for _, m := range sorted(reasons) {
		fmt.Printf("placeholder reason (labs): %d  %s\n", reasons[m], m)
	}
	for _, m := range sorted(failures) {
		fmt.Printf("not imported: %d  %s\n", failures[m], m)
	}
}

func add(t *counts, c counts) {
	t.imported += c.imported
	t.lintOK += c.lintOK
	t.finished += c.finished
	t.runnable += c.runnable
	t.checks += c.checks
	t.typed += c.typed
	t.command += c.command
	t.placeholder += c.placeholder
}

// blockers are what TODO.md says a lab needs that no lab on this machine
// has.
var blockers = []struct{ name, todo string }{
	{"the internet", "reaches the internet"},
	{"another machine", "ssh to another machine"},
	{"several machines", "the track ran on"},
	{"a container engine", "docker (or another container engine)"},
}

func hasCheckScript(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "check-") {
			found = true
		}
		return nil
	})
	return found
}

func reason(t string) string {
	if i := strings.Index(t, ": "); i > 0 && strings.HasPrefix(t, "step") {
		t = t[i+2:]
	}
	if len(t) > 110 {
		t = t[:110] + "…"
	}
	return t
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func sorted(m map[string]int) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	return keys
}
