package checks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labctl/labctl/lab"
)

// The API server writes its audit log (see provision/audit.go) as JSON
// lines to audit.log, and rotates it to audit-<time>.log backups, whose
// names sort in the order they were written.
const (
	auditLogName    = "audit.log"
	auditPolicyName = "policy.yaml"
	// maxAuditBytes bounds what one round reads: the API server keeps at
	// most three files of 20 MB; the newest files are read first.
	maxAuditBytes = 64 << 20
	// maxAuditLine bounds one event; a longer one (a huge request body)
	// is skipped.
	maxAuditLine = 4 << 20
)

// errNoAuditLog makes audit checks errors when the cluster keeps no audit
// log: the checker was given none, or the cluster was made before labctl
// turned it on.
var errNoAuditLog = errors.New("the cluster keeps no audit log of the learner's requests " +
	"(it was made before labctl kept one): run `labctl reset --hard` to remake it with one")

// auditRecord is one request the API server completed, as its audit log
// has it.
type auditRecord struct {
	// Seq is the record's position in the log, oldest first.
	Seq          int
	Time         time.Time
	Verb         string
	FieldManager string
	DryRun       bool
	Code         int
	User         string
	// As is the user the request impersonated, if any.
	As          string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// Body is the request's body as sent (an object, a patch), or nil.
	Body json.RawMessage
}

// auditEvent is the part of an audit.k8s.io/v1 Event labctl reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject  json.RawMessage `json:"requestObject"`
	StageTimestamp time.Time       `json:"stageTimestamp"`
}

// succeeded reports whether the request was carried out: completed and
// 2xx. A dry run (kubectl diff sends its patches as dry runs) succeeds
// without taking effect: selectors tell the two apart (DryRun).
func (r *auditRecord) succeeded() bool {
	return r.Code >= 200 && r.Code < 300
}

// kubectlApplyManagers are the field managers kubectl 1.37 names for apply:
// client-side apply (a patch, or a create for a new object) and
// server-side apply (an apply patch).
var kubectlApplyManagers = []string{"kubectl-client-side-apply", "kubectl"}

// isApply reports whether the request is an apply: kubectl apply with its
// own field managers, or an apply under another field manager (kubectl
// apply --field-manager NAME, another tool) recognised by what it sends to
// the object: a client-side apply writes the last-applied-configuration
// annotation, a server-side apply sends the whole applied configuration
// (apiVersion and kind with it). kubectl's other commands (kubectl-edit,
// which keeps that annotation up to date, kubectl-patch, …) are not.
func (r *auditRecord) isApply() bool {
	if r.Verb != "patch" && r.Verb != "create" {
		return false
	}
	if slices.Contains(kubectlApplyManagers, r.FieldManager) {
		return true
	}
	if r.FieldManager == "" || strings.HasPrefix(r.FieldManager, "kubectl-") || r.Subresource != "" {
		return false
	}
	var body struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return false
	}
	if _, ok := body.Metadata.Annotations[lastAppliedAnnotation]; ok {
		return true
	}
	return r.Verb == "patch" && body.APIVersion != "" && body.Kind != ""
}

// appliedConfiguration is what a client-side apply applied, decoded: the
// configuration it writes in lastAppliedAnnotation. Its patch carries only
// what differs from the object as it is (nothing of spec.replicas when the
// cluster already has the value), the annotation the whole configuration.
// Nil for any other request: a server-side apply's body is its whole
// configuration already.
func (r *auditRecord) appliedConfiguration() any {
	if !r.isApply() {
		return nil
	}
	var body struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return nil
	}
	text, ok := body.Metadata.Annotations[lastAppliedAnnotation]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	return doc
}

// lastAppliedAnnotation is where a client-side apply keeps what it applied.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// parseAuditLine reads one line of the log; ok is false for lines that are
// not a completed request on an object (other stages, panics, garbage).
func parseAuditLine(line []byte) (auditRecord, bool) {
	var ev auditEvent
	if err := json.Unmarshal(line, &ev); err != nil || ev.Stage != "ResponseComplete" || ev.ObjectRef == nil {
		return auditRecord{}, false
	}
	r := auditRecord{
		Time: ev.StageTimestamp, Verb: ev.Verb, User: ev.User.Username,
		Resource: ev.ObjectRef.Resource, Subresource: ev.ObjectRef.Subresource,
		Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
	}
	if ev.ResponseStatus != nil {
		r.Code = ev.ResponseStatus.Code
	}
	if ev.ImpersonatedUser != nil {
		r.As = ev.ImpersonatedUser.Username
	}
	if u, err := url.Parse(ev.RequestURI); err == nil {
		q := u.Query()
		r.FieldManager = q.Get("fieldManager")
		r.DryRun = q.Has("dryRun")
	}
	if len(ev.RequestObject) > 0 && !bytes.Equal(ev.RequestObject, []byte("null")) {
		r.Body = ev.RequestObject
	}
	return r, true
}

// auditFiles lists the log's files, oldest first, keeping the newest ones
// whose sizes add up to at most limit bytes.
func auditFiles(dir string, limit int64) ([]string, error) {
	backups, err := filepath.Glob(filepath.Join(dir, "audit-*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(backups)
	all := append(backups, filepath.Join(dir, auditLogName))
	var keep []string
	var total int64
	for i := len(all) - 1; i >= 0; i-- {
		fi, err := os.Lstat(all[i])
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("reading the audit log: %s is not a regular file", all[i])
		}
		if total += fi.Size(); total > limit && len(keep) > 0 {
			break
		}
		keep = append(keep, all[i])
	}
	slices.Reverse(keep)
	return keep, nil
}

// readAuditLog reads the completed requests of the log in dir, oldest
// first. A directory without the policy means the cluster keeps no log; a
// policy without a log means no request was recorded yet.
func readAuditLog(dir string) ([]auditRecord, error) {
	recs, _, err := readAuditLogRotated(dir)
	return recs, err
}

// readAuditLogRotated is readAuditLog, also saying whether the log was ever
// rotated: older requests may then be gone.
func readAuditLogRotated(dir string) ([]auditRecord, bool, error) {
	if dir == "" {
		return nil, false, errNoAuditLog
	}
	if _, err := os.Stat(filepath.Join(dir, auditPolicyName)); err != nil {
		return nil, false, errNoAuditLog
	}
	backups, err := filepath.Glob(filepath.Join(dir, "audit-*.log"))
	if err != nil {
		return nil, false, err
	}
	recs, err := readAuditFiles(dir)
	return recs, len(backups) > 0, err
}

func readAuditFiles(dir string) ([]auditRecord, error) {
	files, err := auditFiles(dir, maxAuditBytes)
	if err != nil {
		return nil, err
	}
	var out []auditRecord
	for _, f := range files {
		if out, err = readAuditFile(f, out, maxAuditBytes); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readAuditFile appends the records of one file, reading at most limit
// bytes of it (a file that grows while it is read is cut there).
func readAuditFile(path string, out []auditRecord, limit int64) ([]auditRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		// Rotated away between the listing and now.
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	return scanAudit(io.LimitReader(f, limit), out)
}

// scanAudit appends the records of r's lines to out, numbering them on.
func scanAudit(r io.Reader, out []auditRecord) ([]auditRecord, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		complete := err == nil || (errors.Is(err, io.EOF) && len(chunk) > 0)
		if !skipping {
			if len(line)+len(chunk) > maxAuditLine {
				skipping, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if complete && !skipping {
			if rec, ok := parseAuditLine(bytes.TrimSpace(line)); ok {
				rec.Seq = len(out)
				out = append(out, rec)
			}
		}
		line, skipping = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
	}
}

// AuditSource is the audit log one checker round reads: read once, at the
// first audit check, and shared by the others.
type AuditSource struct {
	// Dir holds the log and the policy; empty means none was given.
	Dir string
	// Since maps each audit check of the round to the start of its window
	// (the time its step became current); a check not in it, or a zero
	// time, looks at the whole log.
	Since map[*lab.AuditCheck]time.Time
	// Steps maps each audit check whose step's start the host did not
	// see to that step: its window begins at the step's earliest mark
	// at or after its Since (Request.MarkSteps).
	Steps map[*lab.AuditCheck]string

	once    sync.Once
	records []auditRecord
	// marks are the learner's step marks in the log, oldest first.
	marks []stepMark
	err   error
	// rotated says the log was rotated; oldest is its oldest request
	// still kept. Requests before oldest may be gone.
	rotated bool
	oldest  time.Time
}

// load reads the log once.
func (s *AuditSource) load() ([]auditRecord, error) {
	if s == nil {
		return nil, errNoAuditLog
	}
	s.once.Do(func() {
		recs, rotated, err := readAuditLogRotated(s.Dir)
		if err != nil {
			s.err = err
			return
		}
		s.rotated = rotated
		if len(recs) > 0 {
			s.oldest = recs[0].Time
		}
		for _, r := range recs {
			switch {
			case !r.succeeded():
			case r.Resource == selfReviewResource:
				// A question, not a write: a step's mark, or the
				// learner's kubectl auth can-i.
				if step, ok := markedStep(r.Body); ok {
					s.marks = append(s.marks, stepMark{step: step, at: r.Time})
				}
			default:
				s.records = append(s.records, r)
			}
		}
	})
	return s.records, s.err
}

// lost says whether requests of a window starting at since may be gone
// from the log: it was rotated, and its oldest request kept is later.
func (s *AuditSource) lost(since time.Time) bool {
	return s != nil && s.rotated && (since.IsZero() || s.oldest.After(since))
}

// since is the start of c's window: its Since, or the earliest mark of
// its step at or after it. Call it after load.
func (s *AuditSource) since(c *lab.AuditCheck) time.Time {
	if s == nil {
		return time.Time{}
	}
	start := s.Since[c]
	step := s.Steps[c]
	if step == "" {
		return start
	}
	var first time.Time
	for _, m := range s.marks {
		if m.step == step && !m.at.Before(start) && (first.IsZero() || m.at.Before(first)) {
			first = m.at
		}
	}
	if first.IsZero() {
		return start
	}
	return first
}

// describeSelector shows a selector the way the learner would type the
// request: "apply deployments/web -n gitops-lab".
func describeSelector(sel *lab.AuditSelector) string {
	verbs := "write"
	if len(sel.Verbs) > 0 {
		verbs = strings.Join(sel.Verbs, "|")
	}
	obj := sel.Resource
	if sel.Name != "" {
		obj += "/" + sel.Name
	}
	if sel.Subresource != "" {
		obj += "/" + sel.Subresource
	}
	s := verbs + " " + obj
	if sel.Namespace != "" {
		s += " -n " + sel.Namespace
	}
	if sel.As != "" {
		s += " --as=" + serviceAccountUser(sel.As)
	}
	if sel.DryRun {
		s += " --dry-run=server"
	}
	return s
}
