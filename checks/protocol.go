package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Request is what the host writes to the checker's stdin: where the lab's
// paths are rooted, the grader's cluster credentials, and the checks.
type Request struct {
	// Root is "/" where the checker runs; empty means "/".
	Root string `json:"root,omitempty"`
	// Kube, when set, lets kube checks and kube references read the
	// cluster; the checker uses nothing else (no kubeconfig file).
	Kube *KubeCredentials `json:"kube,omitempty"`
	// Areas are the directories that hold the learner's files besides
	// the top-level directory of each path (see areas.go): the home, the
	// work directory and the fixtures.
	Areas []string `json:"areas,omitempty"`
	// Sandbox are the paths of the sandbox outside the grader's mounts
	// that the host read for the file checks naming them (ReadSandbox).
	Sandbox []SandboxFile `json:"sandbox,omitempty"`
	// Repos are the repositories of the sandbox outside the grader's
	// mounts that the host read for the git checks and git: references
	// naming them (ReadSandboxRepo): each one's Data is its directory's
	// archive.
	Repos []SandboxFile `json:"repos,omitempty"`
	// Lang is the language of the results' messages (en or ja, as
	// msg.Choose picks it on the host); empty means English.
	Lang msg.Lang `json:"lang,omitempty"`
	// Zone is the host's time zone when it asked (its name and offset
	// east of UTC in seconds): messages show times on the learner's clock.
	// Nil is UTC.
	Zone *Zone `json:"zone,omitempty"`
	// ProbeStart, when set, is when the step's probe started (the host's
	// clock, which the sandbox's files share): writtenDuringProbe file
	// checks compare modification times with it.
	ProbeStart *time.Time `json:"probeStart,omitempty"`
	// AuditDir is where the checker reads the API server's audit log
	// (the grader container's read-only mount); empty makes audit checks
	// errors.
	AuditDir string `json:"auditDir,omitempty"`
	// Since gives the start of each check's window, by position in
	// Checks: when the check's step became current. Audit checks judge
	// only the requests after it; a missing or zero time is the whole log.
	Since []time.Time `json:"since,omitempty"`
	// Heads gives each git check that counts commits since its step began
	// (since: step) where its repository was then, by position in Checks,
	// as the host noted it from ReportHead (HEAD's commit or HeadNone, then
	// every branch's commit); HeadNotBegun for a step not begun, "" when
	// the host did not see the step begin.
	Heads []string `json:"heads,omitempty"`
	// MarkSteps gives, by position in Checks, the step of each audit
	// check whose start the host did not see (a learner who works through
	// an invite advances on their own machine): its window then begins at
	// the step's earliest mark in the log (MarkStep) at or after its Since,
	// and at Since when there is none.
	MarkSteps []string    `json:"markSteps,omitempty"`
	Checks    []lab.Check `json:"checks"`
}

// Zone is a time zone as the host names it at one moment.
type Zone struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
}

// LocalZone is the host's zone now.
func LocalZone() *Zone {
	name, offset := time.Now().Zone()
	return &Zone{Name: name, Offset: offset}
}

// location is z as a fixed zone; nil for nil, or an offset beyond a day.
func (z *Zone) location() *time.Location {
	if z == nil || z.Offset <= -86400 || z.Offset >= 86400 {
		return nil
	}
	name := z.Name
	if len(name) > 16 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r > '~' }) {
		name = ""
	}
	return time.FixedZone(name, z.Offset)
}

// KubeCredentials are the grader's: the API server, a bearer token and the
// server's CA certificates (PEM, base64 in JSON).
type KubeCredentials struct {
	Server string `json:"server"`
	Token  string `json:"token"`
	CAData []byte `json:"caData,omitempty"`
}

// Response is what the checker writes to stdout: one result per check, in
// the order of the request.
type Response struct {
	Results []Result `json:"results"`
}

// kubeRequestTimeout bounds each request to the API server.
const kubeRequestTimeout = 10 * time.Second

// Tools are what the checker brings of its own, never taken from a
// request: the image reach checks start their Pods from (the add-ons image
// of the labctl that runs the checker).
type Tools struct {
	ReachImage string
}

// Serve is ServeTools without tools: reach checks end in error.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	return ServeTools(ctx, in, out, Tools{})
}

// ServeTools reads one Request from in, runs its checks with tools and
// writes the Response to out. It returns an error only when the request is
// malformed or the response cannot be written; failing checks are results,
// not errors.
func ServeTools(ctx context.Context, in io.Reader, out io.Writer, tools Tools) error {
	var req Request
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("reading the check request: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("reading the check request: expected one JSON object, found more data after it")
	}
	env, err := req.env()
	if err != nil {
		return err
	}
	env.ReachImage = tools.ReachImage
	resp := Response{Results: Run(ctx, env, req.Checks)}
	env.RemoveCopies()
	if err := json.NewEncoder(out).Encode(resp); err != nil {
		return fmt.Errorf("writing the check results: %w", err)
	}
	return nil
}

// env builds the checks' environment from the request alone.
func (r Request) env() (Env, error) {
	root := r.Root
	if root == "" {
		root = "/"
	}
	if !filepath.IsAbs(root) {
		return Env{}, fmt.Errorf("check request: root %q is not an absolute path", r.Root)
	}
	for _, a := range r.Areas {
		if !filepath.IsAbs(a) {
			return Env{}, fmt.Errorf("check request: area %q is not an absolute path", a)
		}
	}
	env := Env{Root: root, Now: time.Now, Areas: r.Areas, Lang: r.Lang, Zone: r.Zone.location()}
	if r.ProbeStart != nil {
		env.ProbeStart = *r.ProbeStart
	}
	env.Audit = r.auditSource()
	if len(r.Sandbox) > 0 {
		env.Sandbox = map[string]*SandboxFile{}
		for i := range r.Sandbox {
			env.Sandbox[r.Sandbox[i].Path] = &r.Sandbox[i]
		}
	}
	if len(r.Repos) > 0 {
		env.Repos = map[string]*SandboxRepo{}
		for i := range r.Repos {
			env.Repos[r.Repos[i].Path] = &SandboxRepo{File: &r.Repos[i]}
		}
	}
	env.Heads = map[*lab.GitCheck]string{}
	for i, c := range r.Checks {
		if c.Git != nil && i < len(r.Heads) {
			env.Heads[c.Git] = r.Heads[i]
		}
	}
	if r.Kube == nil {
		return env, nil
	}
	if r.Kube.Server == "" {
		return Env{}, errors.New("check request: kube.server is empty; give the API server's URL or omit kube")
	}
	reader, err := NewKubeReader(r.Kube.restConfig())
	if err != nil {
		return Env{}, fmt.Errorf("check request: %w", err)
	}
	env.Kube = reader
	return env, nil
}

// restConfig is built from the credentials only: no kubeconfig file, no
// environment, no proxy.
func (k *KubeCredentials) restConfig() *rest.Config {
	return &rest.Config{
		Host:            k.Server,
		BearerToken:     k.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: k.CAData},
		Timeout:         kubeRequestTimeout,
		UserAgent:       "labctl-checker",
		// A permissions check asks hundreds of questions in one round.
		QPS:   200,
		Burst: 400,
		Proxy: func(*http.Request) (*url.URL, error) { return nil, nil },
	}
}

// auditSource is the round's audit log, with each audit check's window.
func (r Request) auditSource() *AuditSource {
	src := &AuditSource{Dir: r.AuditDir, Since: map[*lab.AuditCheck]time.Time{}, Steps: map[*lab.AuditCheck]string{}}
	for i, c := range r.Checks {
		if c.Audit != nil && i < len(r.Since) {
			src.Since[c.Audit] = r.Since[i]
		}
		if c.Audit != nil && i < len(r.MarkSteps) && r.MarkSteps[i] != "" {
			src.Steps[c.Audit] = r.MarkSteps[i]
		}
	}
	return src
}
