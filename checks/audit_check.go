package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// checkAudit judges what the learner's identity did in the cluster during
// the step, from the API server's audit log (read once per round).
//
// pass: some request of the window matches the selector, comes after the
// last request matching After and after AfterCommit's commit was written,
// and its body meets Request; with Absent, none does. fail: otherwise,
// naming what was expected and what the log holds. error: the cluster
// keeps no audit log, or it cannot be read.
func checkAudit(ctx context.Context, env Env, ac *lab.AuditCheck) error {
	recs, err := env.Audit.load()
	if err != nil {
		return err
	}
	since := env.Audit.since(ac)
	desc := describeSelector(&ac.AuditSelector)
	window := msg.T(msg.AuditLabStart)
	if !since.IsZero() {
		window = msg.T(msg.AuditStepStart, clock(since))
	}
	if ac.DuringProbe {
		// Only what the probe's run of the learner's artifact did counts,
		// not what the learner typed before it.
		if env.ProbeStart.IsZero() {
			return failf(msg.AuditNoProbe, desc)
		}
		if env.ProbeStart.After(since) {
			since = env.ProbeStart
		}
		window = msg.T(msg.AuditProbeStart, clock(since))
	}

	// The order: only requests after the last one matching After count.
	after := -1
	var afterRec *auditRecord
	if ac.After != nil {
		for i := range recs {
			if selectorMatches(ac.After, &recs[i]) {
				after, afterRec = recs[i].Seq, &recs[i]
			}
		}
		if afterRec == nil && !ac.Absent {
			a := describeSelector(ac.After)
			return failf(msg.AuditNoEarlier, desc, a, a)
		}
	}

	// The order against a commit: only requests the API server finished
	// after the commit's object was written count.
	var commit *commitWritten
	if ac.AfterCommit != nil {
		c, err := findCommitWritten(ctx, env, ac.AfterCommit, since)
		if err != nil {
			return err
		}
		commit = &c
	}

	var matched []*auditRecord
	var beforeCommit *auditRecord
	inWindow := 0
	for i := range recs {
		r := &recs[i]
		if r.Time.Before(since) || !selectorMatches(&ac.AuditSelector, r) {
			continue
		}
		inWindow++
		if r.Seq <= after {
			continue
		}
		if commit != nil && !r.Time.After(commit.at) {
			beforeCommit = r
			continue
		}
		matched = append(matched, r)
	}

	var bodyFail error
	var found *auditRecord
	withBody := 0
	for _, r := range matched {
		if ac.Request == nil {
			found = r
			continue
		}
		withBody++
		if err := checkRequestBody(ctx, env, ac.Request, r); err != nil {
			var f *failure
			if !errors.As(err, &f) {
				return err
			}
			bodyFail = err
			continue
		}
		found = r
	}

	if ac.Absent {
		if found != nil {
			return failf(msg.AuditUnexpected, desc, window, clock(found.Time))
		}
		if env.Audit.lost(since) {
			// Enough writes rotate the log: what they pushed out cannot
			// be shown absent.
			return fmt.Errorf("the API server's audit log was rotated after the step started (its oldest request kept is from %s), so no %s cannot be shown: the requests before it are gone", env.Audit.oldest.UTC().Format("15:04:05 UTC"), desc)
		}
		return nil
	}
	switch {
	case found != nil:
		return nil
	case withBody > 0:
		var f *failure
		errors.As(bodyFail, &f)
		return failf(msg.AuditBody, desc, window, withBody, f.text)
	case beforeCommit != nil:
		key := msg.AuditBeforeCommit
		if commit.packed {
			key = msg.AuditBeforePackedCommit
		}
		return failf(key, desc, short(commit.hash), ac.AfterCommit.Touching, ac.AfterCommit.Repo,
			clock(commit.at), clock(beforeCommit.Time))
	case inWindow > 0 && afterRec != nil:
		return failf(msg.AuditMissingAfter, desc, describeSelector(ac.After), clock(afterRec.Time))
	}
	return failf(msg.AuditMissing, desc, window)
}

// selectorMatches reports whether r is a request sel picks.
func selectorMatches(sel *lab.AuditSelector, r *auditRecord) bool {
	if len(sel.Verbs) > 0 && !slices.ContainsFunc(sel.Verbs, func(v string) bool {
		if v == "apply" {
			return r.isApply()
		}
		return v == r.Verb
	}) {
		return false
	}
	return sel.DryRun == r.DryRun &&
		(sel.Resource == "" || sel.Resource == r.Resource) &&
		sel.Subresource == r.Subresource &&
		(sel.Namespace == "" || sel.Namespace == r.Namespace) &&
		(sel.Name == "" || sel.Name == r.Name) &&
		(sel.As == "" || serviceAccountUser(sel.As) == r.As)
}

// serviceAccountUser is the user name of the ServiceAccount ns/name.
func serviceAccountUser(nsName string) string {
	ns, name, _ := strings.Cut(nsName, "/")
	return "system:serviceaccount:" + ns + ":" + name
}

// checkRequestBody applies the body assertion to r's request body, parsed
// as JSON (numbers kept exact).
func checkRequestBody(ctx context.Context, env Env, ra *lab.RequestAssert, r *auditRecord) error {
	p, err := lab.ParsePath(ra.Path)
	if err != nil {
		return err
	}
	var doc any
	if len(r.Body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			doc = nil
		}
	}
	if applied := r.appliedConfiguration(); applied != nil {
		doc = applied
	}
	var docs []any
	if doc != nil {
		docs = []any{normalize(doc)}
	}
	return checkAssert(ctx, env, &ra.Assert, ra.Path, selectAll(p, docs), msg.T(msg.AuditInBody))
}

// clock shows a time of the log.
func clock(t time.Time) msg.Clock { return msg.TimeOfDay(t) }
