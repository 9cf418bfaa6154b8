// Package report owns grade reports: the report model built from one round
// of a lab's checks, and its renderings as a text table, JSON and JUnit XML;
// and a class's report of every learner's grade (Class), rendered the same
// three ways.
//
// # JSON schema (schemaVersion 1)
//
// `labctl grade -o json` writes one object. Every key is always present;
// new keys may be added within schemaVersion 1, existing ones keep their
// meaning and type, and any other change increments schemaVersion.
//
//	{
//	  "schemaVersion": 1,
//	  "lab": {
//	    "name":    string,   // metadata.name
//	    "version": string,   // metadata.version ("" when unset)
//	    "title":   string,   // metadata.title
//	    "digest":  string,   // "sha256:<hex>" of the lab definition, see Digest
//	    "nodeRoot": boolean  // the learner was root on the lab's nodes, so on
//	                         // the machine that ran it (cluster.nodeAccess)
//	  },
//	  "gradedAt": string,    // RFC 3339 UTC time the checks ran
//	  "score":    integer,   // sum of points of the checks that passed
//	  "maxScore": integer,   // sum of points of every check, optional ones included
//	  "passed":   boolean,   // every required (non-optional) check passed
//	  "steps": [{            // in lab order
//	    "id":     string,
//	    "title":  string,
//	    "passed": boolean,   // every required check of the step passed
//	    "checks": [{         // in lab order
//	      "name":        string,
//	      "description": string,
//	      "status":      "pass" | "fail" | "error",
//	      "message":     string,   // what was expected and found; "" on pass
//	      "durationMs":  integer,
//	      "points":      integer,  // what the check is worth
//	      "optional":    boolean
//	    }],
//	    "mistakes": [{       // the step's declared mistakes whose fails are
//	      "name":        string, // exactly the checks that failed; [] when
//	      "description": string, // none is, or a check could not run
//	      "explain":     string
//	    }]
//	  }]
//	}
//
// "fail" means the learner's work does not meet the check; "error" means the
// check could not run, which says nothing about the learner's work.
//
// # JUnit XML
//
// One <testsuite> per step (named by step id), one <testcase> per check
// (classname "<lab>.<step>"). A failed required check is a <failure>, a
// required check that could not run an <error>, and an optional check that
// did not pass is <skipped> so that it does not fail a CI job.
package report

import (
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// SchemaVersion is the version of the JSON report this labctl writes.
const SchemaVersion = 1

// Report is one grading of a lab.
type Report struct {
	SchemaVersion int       `json:"schemaVersion"`
	Lab           Lab       `json:"lab"`
	GradedAt      time.Time `json:"gradedAt"`
	Score         int       `json:"score"`
	MaxScore      int       `json:"maxScore"`
	Passed        bool      `json:"passed"`
	Steps         []Step    `json:"steps"`
}

// Lab identifies the graded lab definition.
type Lab struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title"`
	Digest  string `json:"digest"`
	// NodeRoot says that the learner was root on the lab's nodes
	// (cluster.nodeAccess), privileged containers: root on the machine
	// that ran the lab, where they could have changed anything, the
	// grade's input included.
	NodeRoot bool `json:"nodeRoot"`
}

// Step is the grading of one step.
type Step struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Passed bool   `json:"passed"`
	// PassedAt, when set, says the results are those of the round in
	// which the step passed, kept by labctl on the host; the grade judged
	// again only the lab's final checks.
	PassedAt *time.Time `json:"passedAt,omitempty"`
	// SolutionShownAt, when set, is when the learner first asked for the
	// step's solution.
	SolutionShownAt *time.Time `json:"solutionShownAt,omitempty"`
	Checks          []Check    `json:"checks"`
	// Mistakes are the known mistakes the failing checks look like.
	Mistakes []Mistake `json:"mistakes"`
}

// Check is the result of one check.
type Check struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Status      checks.Status `json:"status"`
	Message     string        `json:"message"`
	DurationMs  int64         `json:"durationMs"`
	Points      int           `json:"points"`
	Optional    bool          `json:"optional"`
}

// Build makes the report of l from the results of each step's checks, keyed
// by step id and in the order of the step's checks; a step without results
// is reported with none.
func Build(l *lab.Lab, digest string, gradedAt time.Time, results map[string][]checks.Result) *Report {
	return BuildKept(l, digest, gradedAt, results, nil)
}

// BuildKept is Build for results of which some steps' are kept from the
// round in which they passed, at the times kept names.
func BuildKept(l *lab.Lab, digest string, gradedAt time.Time, results map[string][]checks.Result, kept map[string]time.Time) *Report {
	return BuildFull(l, digest, gradedAt, results, kept, nil, nil)
}

// BuildFull is BuildKept that also says, for each step in shown, when the
// learner first asked for its solution, and names the known mistakes of
// each step by the evidence judged for it in evidence (by step id).
func BuildFull(l *lab.Lab, digest string, gradedAt time.Time, results map[string][]checks.Result, kept, shown map[string]time.Time, evidence map[string]Evidence) *Report {
	r := &Report{
		SchemaVersion: SchemaVersion,
		Lab: Lab{
			Name:     l.Metadata.Name,
			Version:  l.Metadata.Version,
			Title:    l.Metadata.Title,
			Digest:   digest,
			NodeRoot: l.Cluster.NodeAccess,
		},
		GradedAt: gradedAt.UTC(),
		Passed:   true,
		Steps:    make([]Step, 0, len(l.Steps)),
	}
	for _, s := range l.Steps {
		rs := results[s.ID]
		sum := checks.Summarize(rs)
		r.Score += sum.Score
		r.MaxScore += sum.MaxScore
		st := Step{ID: s.ID, Title: s.Title, Passed: sum.Passed(), Checks: make([]Check, 0, len(rs)),
			Mistakes: LikelyMistakes(&s, rs, evidence[s.ID])}
		if at, ok := kept[s.ID]; ok {
			at = at.UTC()
			st.PassedAt = &at
		}
		if at, ok := shown[s.ID]; ok {
			at = at.UTC()
			st.SolutionShownAt = &at
		}
		if !st.Passed {
			r.Passed = false
		}
		for _, c := range rs {
			st.Checks = append(st.Checks, Check{
				Name:        c.Name,
				Description: c.Description,
				Status:      c.Status,
				Message:     c.Message,
				DurationMs:  c.Duration.Milliseconds(),
				Points:      c.Points,
				Optional:    c.Optional,
			})
		}
		r.Steps = append(r.Steps, st)
	}
	return r
}

// Summary counts the report's results over every step.
func (r *Report) Summary() checks.Summary {
	var all []checks.Result
	for _, s := range r.Steps {
		for _, c := range s.Checks {
			all = append(all, checks.Result{Status: c.Status, Points: c.Points, Optional: c.Optional})
		}
	}
	return checks.Summarize(all)
}
